#include "tools/mstep/report_common.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <tuple>
#include <unordered_set>
#include <utility>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/analysis/report.hpp"
#include "model/analysis/speed_check.hpp"
#include "tools/mstep/progress.hpp"

namespace mstep::cli {
namespace fs = std::filesystem;

namespace {

struct PairHash {
  std::size_t operator()(const std::pair<const Hotspot*, std::int32_t>& p) const {
    return std::hash<const Hotspot*>{}(p.first) * 31 + std::hash<std::int32_t>{}(p.second);
  }
};

}  // namespace

TraceDir load_trace_for_models(const std::string& dir, const std::string& stream, bool& streamed) {
  TraceDir trace = [&] {
    Progress progress("reading", static_cast<std::uint64_t>(read_run_meta(dir).ranks));
    return load_trace_dir(dir, std::nullopt, [&](std::size_t r) { progress.update(r); }, true);
  }();
  const bool wanted = stream == "yes" || (stream == "auto" && trace_records(trace) > model::kStreamAboveRecords);
  if (wanted && !model::can_stream(trace) && stream == "yes") {
    std::fprintf(stderr, "mstep: --stream yes: this trace has MPI calls from several threads or "
                         "intercommunicators, which a streamed analysis does not take\n");
    throw CLI::RuntimeError(1);
  }
  streamed = wanted && model::can_stream(trace);
  if (!streamed) {
    Progress progress("reading", static_cast<std::uint64_t>(trace.ranks.size()));
    trace = load_trace_dir(dir, std::nullopt, [&](std::size_t r) { progress.update(r); }, false, /*with_steps=*/false);
  }
  return trace;
}

std::string find_params(const std::string& given, const std::string& trace) {
  if (!given.empty()) return given;
  std::error_code ec;
  if (fs::exists(fs::path(trace) / "params.json", ec)) return (fs::path(trace) / "params.json").string();
  if (const char* env = std::getenv("MSTEP_PARAMS"); env && *env) return env;
  if (const char* home = std::getenv("HOME")) {
    const auto p = fs::path(home) / ".config" / "mstep" / "params.json";
    if (fs::exists(p, ec)) return p.string();
  }
  return {};
}

void add_params_option(CLI::App& cmd, std::vector<std::string>& files, const std::string& what) {
  cmd.add_option("--params", files,
                 what + " (default: TRACE/params.json, $MSTEP_PARAMS, ~/.config/mstep/params.json). Give it again "
                        "for several calibrations (of different periods of the machine, or networks), or give a "
                        "directory of them (its *.json files in name order): the first one of the run's network and "
                        "period (by its 8-byte half round trip) is used, else the nearest, and the output says which")
      ->allow_extra_args(false);
}

std::vector<ParamsFile> read_params_given(const std::vector<std::string>& given, const std::string& trace_dir) {
  std::vector<ParamsFile> out;
  std::vector<std::string> files = given;
  if (files.empty())
    if (std::string found = find_params({}, trace_dir); !found.empty()) files.push_back(std::move(found));
  // A directory stands for its *.json files, in name order: a user's calibrations of several periods.
  std::vector<std::string> expanded;
  for (const std::string& f : files) {
    std::error_code ec;
    if (!fs::is_directory(f, ec)) {
      expanded.push_back(f);
      continue;
    }
    std::vector<std::string> in_dir;
    for (const auto& e : fs::directory_iterator(f, ec))
      if (e.path().extension() == ".json" && e.is_regular_file(ec)) in_dir.push_back(e.path().string());
    if (in_dir.empty()) {
      std::fprintf(stderr, "mstep: %s: a directory without parameter files (*.json)\n", f.c_str());
      throw CLI::RuntimeError(1);
    }
    std::sort(in_dir.begin(), in_dir.end());
    expanded.insert(expanded.end(), in_dir.begin(), in_dir.end());
  }
  for (const std::string& f : expanded) {
    try {
      out.push_back({f, model::read_params(f)});
    } catch (const model::ParamsError& e) {
      std::fprintf(stderr, "mstep: %s\n", e.what());
      throw CLI::RuntimeError(1);
    }
  }
  return out;
}

ChosenParams choose_params(std::span<const ParamsFile> files, const TraceDir& trace) {
  ChosenParams c;
  if (files.size() < 2) return c;
  // The run's network first: a TCP calibration is never the nearest period of a shared-memory run
  // by accident of the machine's speed.
  std::vector<std::size_t> same_network;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& p = files[i].params;
    if (!trace.meta.environment || p.meta.source.empty() ||
        environment_differences(*trace.meta.environment, p.meta.environment, "the run", files[i].file.c_str()).empty())
      same_network.push_back(i);
  }
  if (same_network.empty())
    for (std::size_t i = 0; i < files.size(); ++i) same_network.push_back(i);
  std::vector<const model::CalibrationParams*> candidates;
  for (const std::size_t i : same_network) candidates.push_back(&files[i].params);
  const model::PeriodMatch m = model::choose_by_period(trace, candidates);
  c.index = same_network[m.index];
  auto us = [](double s) { return s > 0 ? fmt::format("{:.3f} us", s * 1e6) : std::string("not measured"); };
  std::vector<std::string> others;
  for (std::size_t i = 0; i < files.size(); ++i)
    if (i != c.index) {
      const bool other_net = std::find(same_network.begin(), same_network.end(), i) == same_network.end();
      others.push_back(fmt::format("{} {}{}", files[i].file, us(files[i].params.meta.half_rtt_8B),
                                   other_net ? ", another network" : ""));
    }
  const std::string of = fmt::format("of {} given", files.size());
  const std::string not_chosen = others.empty() ? "" : "; not " + fmt::format("{}", fmt::join(others, "; "));
  if (m.in_period)
    c.choice = fmt::format("{}, the first of the run's period: 8-byte half round trip {}, the run's {}{}", of,
                           us(files[c.index].params.meta.half_rtt_8B), us(m.run_s), not_chosen);
  else if (m.by_probe)
    c.choice = fmt::format("{}, none of the run's period: the nearest, 8-byte half round trip {}, the run's {}{}", of,
                           us(files[c.index].params.meta.half_rtt_8B), us(m.run_s), not_chosen);
  else
    c.choice = fmt::format("{}, the first{}: the run has no probe of its half round trip, or no file has the "
                           "measurement{}",
                           of, same_network.size() < files.size() ? " of the run's network" : "", not_chosen);
  return c;
}

SourceLocation site_location(Symbolizer& sym, const TraceDir& trace, const model::WaitSite& w) {
  SourceLocation loc;
  const auto r = static_cast<std::size_t>(w.rank);
  if (r >= trace.ranks.size() || !trace.ranks[r]) return loc;
  for (const CallsiteDef& def : trace.ranks[r]->callsites) {
    if (def.id != w.callsite) continue;
    const CallsiteFrame* pick = def.frames.empty() ? nullptr : &def.frames.front();
    for (const auto& f : def.frames)
      if (!is_mpi_module(f.module)) {
        pick = &f;
        break;
      }
    if (pick) loc = sym.resolve(*pick);
    break;
  }
  return loc;
}

std::vector<Hotspot> resolve_hotspots(const TraceDir& trace, const model::Report& rep) {
  Symbolizer sym;
  std::map<std::tuple<int, std::string, std::string, std::string, int>, Hotspot> merged;
  // Ranks already named, per hotspot: a line reached by every rank of a large run must not cost
  // a search of its rank list per wait site (ranks squared).
  std::unordered_set<std::pair<const Hotspot*, std::int32_t>, PairHash> named;
  for (const model::WaitSite& w : rep.waits) {
    const SourceLocation loc = site_location(sym, trace, w);
    const std::string call = mpi_name(w.op);
    Hotspot& h = merged[{static_cast<int>(w.kind), call, loc.function, loc.file, loc.line}];
    h.kind = w.kind;
    h.mpi_call = call;
    h.function = loc.function.empty() ? "?" : loc.function;
    h.file = loc.file;
    h.line = loc.line;
    h.module = loc.module;
    h.wait_s += w.wait_s;
    h.predicted_wait_s += w.predicted_wait_s;
    h.count += w.count;
    // One rank may reach a line through several stacks (call-site ids): name it once.
    if (named.emplace(&h, w.rank).second) h.ranks.push_back(w.rank);
  }
  std::vector<Hotspot> out;
  for (auto& [k, h] : merged) out.push_back(std::move(h));
  std::sort(out.begin(), out.end(), [](const Hotspot& a, const Hotspot& b) { return a.wait_s > b.wait_s; });
  return out;
}

double share_pct(const model::Report& rep, double seconds) {
  const double total = rep.actual_s * rep.ranks;
  return total > 0 ? 100.0 * seconds / total : 0.0;
}

void warn_if_other_network(const model::CalibrationParams& params, const std::string& params_file,
                           const TraceDir& trace) {
  if (!trace.meta.environment || params.meta.source.empty()) return;
  const std::string diff =
      environment_differences(*trace.meta.environment, params.meta.environment, "the run", params_file.c_str());
  if (!diff.empty())
    std::fprintf(stderr, "mstep: warning: the run and its parameters are from different networks (%s): the "
                 "predictions are for the parameters' network\n", diff.c_str());
}

void warn_if_other_speed(const model::CalibrationParams& params, const TraceDir& trace) {
  const auto probed = model::probed_latency(trace, model::calibrated_on_one_host(params));
  if (const auto diff = model::run_speed_difference(probed, params))
    std::fprintf(stderr, "mstep: warning: %s\n", diff->c_str());
}

}  // namespace mstep::cli
