#include "tools/mstep/calibrate_substitutes.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "tools/mstep/launcher.hpp"
#include "model/trace/substitutes.hpp"

namespace mstep::cli {
namespace fs = std::filesystem;

namespace {

// The delay apparatus's settings (interpose/delay.hpp): none applies to these runs.
constexpr const char* kApparatusVariables[] = {"MSTEP_DELAY_L",    "MSTEP_DELAY_O",      "MSTEP_DELAY_GAP",
                                               "MSTEP_DELAY_PER_BYTE", "MSTEP_DELAY_RNDV", "MSTEP_DELAY_NATIVE",
                                               "MSTEP_DELAY_PAIRS"};

// One run of mstep_calib --collectives-only: its loops' times, and rank 0's self_allreduce_s.
struct LoopRun {
  model::CollectiveTable table;
  double self_s = 0;
};

// Natively, or under libmstep (recording) with the substitutes or without; `probe_only`: the
// self probe alone (--self-probe-only).
enum class Under { Native, Recorder, Substitutes };
// The sizes the calibration's own loops were timed at (all but MPI_Barrier share them): the
// substitutes' must be the same for set_substitute_times to take them.
std::string loop_sizes(const model::CalibrationParams& p) {
  for (const auto& [op, t] : p.collectives)
    if (op != Op::Barrier && !t.bytes.empty()) return fmt::format("{}", fmt::join(t.bytes, ","));
  return {};
}

LoopRun run_loops(const SubstituteCalibration& c, Under under, bool probe_only, const std::string& name,
                  const std::string& sizes = {}) {
  const fs::path out = c.work / (name + ".json"), phase = c.work / (name + ".phase");
  std::vector<std::string> command = c.launcher;
  command.insert(command.end(), {c.bench, "--collectives-only", "--quiet", "--output", out.string(), "--phase-file",
                                 phase.string()});
  if (probe_only) command.push_back("--self-probe-only");
  if (!probe_only && !sizes.empty()) command.insert(command.end(), {"--sizes", sizes});
  if (c.quick) command.push_back("--quick");
  EnvChanges env;
  if (under == Under::Native) {
    env = {{"LD_PRELOAD", std::nullopt}, {"MSTEP_ENABLE", std::nullopt}};
  } else {
    env = {{"LD_PRELOAD", c.library}, {"MSTEP_DIR", (c.work / (name + "-trace")).string()}, {"MSTEP_ENABLE", "1"}};
  }
  for (const char* v : kApparatusVariables) env.emplace_back(v, std::nullopt);
  env.emplace_back("MSTEP_CALIB_STALL", std::nullopt);  // the test hook stalls the calibration's own run
  for (const model::SubstituteFamily& f : model::kSubstituteFamilies)
    env.emplace_back(f.variable, under == Under::Substitutes ? std::optional<std::string>(f.mpich_choice) : std::nullopt);
  std::string stuck;
  const int code = run_watched(command, env, phase, c.timeout_s, stuck);
  if (!stuck.empty() && (stuck != "finalize" || !fs::exists(out)))
    throw std::runtime_error(fmt::format("{} stuck in phase '{}' for {:g} s", name, stuck, c.timeout_s));
  if (code != 0 && stuck != "finalize") throw std::runtime_error(fmt::format("{} exited with code {}", name, code));
  std::ifstream in(out);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(fmt::format("{} wrote no readable times ({})", name, out.string()));
  }
  LoopRun run;
  if (!j.contains("collectives") || !j.at("collectives").is_object() || !j.contains("self_allreduce_s") ||
      !j.at("self_allreduce_s").is_number())
    throw std::runtime_error(fmt::format("{}: no collectives or self_allreduce_s in {}", name, out.string()));
  run.self_s = j.at("self_allreduce_s").get<double>();
  for (const auto& [op_name, v] : j.at("collectives").items()) {
    for (int i = 0; i < kOpCount; ++i)
      if (mpi_name(static_cast<Op>(i)) == op_name) {
        model::CollectiveTimes& t = run.table[static_cast<Op>(i)];
        t.bytes = v.at("bytes").get<std::vector<std::uint64_t>>();
        t.measured_s = v.at("measured_s").get<std::vector<double>>();
        if (const auto iso = v.find("isolated"); iso != v.end()) {
          t.isolated_gap_s = iso->at("gap_s").get<double>();
          t.isolated_measured_s = iso->at("measured_s").get<std::vector<double>>();
        }
      }
  }
  return run;
}

}  // namespace

std::string calibrate_substitutes(const SubstituteCalibration& c, model::CalibrationParams& p) {
  std::error_code ec;
  fs::create_directories(c.work, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", c.work.string(), ec.message()));
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code e;
      fs::remove_all(dir, e);
    }
  } cleanup{c.work};
  // Two rounds, alternating, and each loop's fastest time: on a shared machine noise only adds time
  // (a frame the recorder flushes inside a loop, a slow period). The recorder's cost per call, to
  // take off the substitutes' times, is measured directly on a collective that moves nothing (one
  // int on MPI_COMM_SELF) recorded and natively: no network in it, so none of the network's noise
  // (MPICH's own loops preloaded less native, the estimate until stop 48, came out at 1.3 us once
  // over TCP where the recorder costs tens of nanoseconds).
  model::CollectiveTable substitutes;
  double native_s = 1e9, recorded_s = 1e9;
  auto keep_faster = [](model::CollectiveTable& into, const model::CollectiveTable& run) {
    for (const auto& [op, t] : run) {
      auto [it, fresh] = into.try_emplace(op, t);
      if (fresh || it->second.bytes != t.bytes) continue;
      for (std::size_t i = 0; i < t.measured_s.size() && i < it->second.measured_s.size(); ++i)
        it->second.measured_s[i] = std::min(it->second.measured_s[i], t.measured_s[i]);
      for (std::size_t i = 0; i < t.isolated_measured_s.size() && i < it->second.isolated_measured_s.size(); ++i)
        it->second.isolated_measured_s[i] = std::min(it->second.isolated_measured_s[i], t.isolated_measured_s[i]);
    }
  };
  try {
    for (int round = 1; round <= 2; ++round) {
      native_s = std::min(native_s, run_loops(c, Under::Native, true, fmt::format("native-probe-{}", round)).self_s);
      recorded_s = std::min(recorded_s, run_loops(c, Under::Recorder, true, fmt::format("recorded-probe-{}", round)).self_s);
      keep_faster(substitutes,
                  run_loops(c, Under::Substitutes, false, fmt::format("substitutes-{}", round), loop_sizes(p)).table);
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("unreadable loop times: {}", e.what()));
  }
  const double recorder_s = std::max(0.0, recorded_s - native_s);
  const int operations = model::set_substitute_times(p.collectives, substitutes, recorder_s);
  if (operations == 0) throw std::runtime_error("no collective was measured both ways");
  return fmt::format("substitutes: libmstep's collectives (MPICH's choice over point-to-point) timed per call for {} "
                     "operations under the recorder, less its cost per call ({:.3f} us: a one-int MPI_Allreduce on "
                     "MPI_COMM_SELF recorded, {:.3f} us, against native, {:.3f} us)",
                     operations, recorder_s * 1e6, recorded_s * 1e6, native_s * 1e6);
}

}  // namespace mstep::cli
