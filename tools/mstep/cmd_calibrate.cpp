// mstep calibrate: run the benchmark mstep_calib under an MPI launcher and keep the parameter
// file it writes (MODELS.md sections 2-5), then time libmstep's substitute collectives
// (tools/mstep/calibrate_substitutes.hpp).
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "model/params/params.hpp"
#include "tools/mstep/calibrate_substitutes.hpp"
#include "tools/mstep/launcher.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/output.hpp"

namespace mstep::cli {

// In cmd_params.cpp.
void print_params(const model::CalibrationParams& p, const std::string& name);

namespace fs = std::filesystem;

namespace {

struct CalibrateOptions {
  std::string output;
  bool force = false;
  bool quick = false;
  bool quiet = false;
  std::uint64_t max_size = 0;
  double timeout_s = 120;
  bool substitutes = true;
  std::vector<std::string> launcher;
};


// mstep_calib lies beside this mstep (bin/), in the build tree as when installed.
std::string find_benchmark() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  const fs::path candidate = fs::path(std::string(self, static_cast<std::size_t>(n))).parent_path() / "mstep_calib";
  std::error_code ec;
  return fs::exists(candidate, ec) ? candidate.string() : std::string();
}

void run_calibrate(const CalibrateOptions& o) {
  const std::string bench = find_benchmark();
  if (bench.empty()) fail(2, "cannot find mstep_calib next to this mstep (expected in the same directory)");
  std::error_code ec;
  const fs::path out = fs::absolute(o.output, ec);
  if (fs::exists(out, ec) && !o.force) fail(2, fmt::format("{} exists (use -f to replace it)", o.output));
  if (fs::is_directory(out, ec)) fail(2, fmt::format("{} is a directory", o.output));
  // Written by rank 0 wherever the launcher puts it: an absolute path, as on a shared file system.
  const fs::path partial = out.string() + ".partial";
  fs::remove(partial, ec);

  std::vector<std::string> launcher = o.launcher;
  if (launcher.empty()) launcher = {default_launcher(), "-n", "2"};
  std::vector<std::string> command = launcher;
  command.insert(command.end(), {bench, "--output", partial.string()});
  if (o.quick) command.push_back("--quick");
  if (o.quiet) command.push_back("--quiet");
  if (o.max_size > 0) command.insert(command.end(), {"--max-size", std::to_string(o.max_size)});

  const fs::path phase_file = out.string() + ".phase";
  command.insert(command.end(), {"--phase-file", phase_file.string()});
  std::string stuck;
  const int code = run_watched(command, {}, phase_file, o.timeout_s, stuck);
  fs::remove(phase_file, ec);
  // Stuck in MPI_Finalize after rank 0 wrote every parameter: the measurement is whole.
  const bool whole = stuck == "finalize" && fs::exists(partial, ec);
  if (whole)
    std::fprintf(stderr, "mstep: warning: the calibration did not get through MPI_Finalize in %g s and was stopped; "
                 "its parameters were already written\n", o.timeout_s);
  if (!stuck.empty() && !whole) {
    fs::remove(partial, ec);
    fail(1, fmt::format("calibration stuck in phase '{}' for {:g} s: stopped it (no parameter file written)", stuck,
                        o.timeout_s));
  }
  if (code != 0 && !whole) {
    fs::remove(partial, ec);
    fail(code == 127 ? 127 : 1, fmt::format("calibration failed: {} exited with code {}", command.front(), code));
  }
  if (!fs::exists(partial, ec))
    fail(1, fmt::format("calibration wrote no parameter file ({} not found: does rank 0 share this file system?)",
                        partial.string()));
  model::CalibrationParams p;
  try {
    p = model::read_params(partial);
  } catch (const model::ParamsError& e) {
    fail(1, fmt::format("calibration wrote a bad parameter file: {}", e.what()));
  }
  if (o.substitutes && p.loggps && !p.collectives.empty()) {
    const std::string library = find_preload_library();
    SubstituteCalibration c{launcher, bench, library, fs::path(out.string() + ".substitutes"), o.quick, o.timeout_s};
    try {
      if (library.empty()) throw std::runtime_error("libmstep.so not found next to this mstep (../lib)");
      if (!o.quiet) std::fprintf(stderr, "mstep: timing libmstep's substitute collectives\n");
      model::CalibrationParams with = p;
      with.meta.notes.push_back(calibrate_substitutes(c, with));
      model::write_params(partial, with);  // a new file moved over the first: a failed write leaves that one
      p = std::move(with);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mstep: warning: libmstep's substitute collectives not timed (%s): the replay charges "
                   "them their messages alone\n", e.what());
    }
  }
  fs::rename(partial, out, ec);
  if (ec) fail(1, fmt::format("cannot write {}: {}", o.output, ec.message()));
  if (!o.quiet) {
    print_params(p, o.output);
    fmt::print("\n");
  }
  std::fprintf(stderr, "mstep: parameters in %s (mstep params show %s)\n", o.output.c_str(), o.output.c_str());
}

}  // namespace

void add_calibrate(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  auto* cmd = app.add_subcommand(
      "calibrate", "Measure this machine's LogGPS, BSPWB/MPM, linear and broadcast parameters");
  cmd->add_option("-o,--output", o->output, "Parameter file to write (JSON)")->required();
  cmd->add_flag("-f,--force", o->force, "Replace an existing parameter file");
  cmd->add_flag("--quick", o->quick, "Short mode: fewer sizes and repetitions (a few seconds)");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress and no summary");
  cmd->add_option("--timeout", o->timeout_s,
                  "Seconds one phase may take before the calibration is stopped and the phase named (0: no limit)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--max-size", o->max_size, "Largest message size in bytes (default 4 MiB, quick 2 MiB)")
      ->check(CLI::Range(1024, 1 << 30));
  cmd->add_flag("!--no-substitutes", o->substitutes,
                "Do not time libmstep's substitute collectives (two more short runs under libmstep)");
  cmd->add_option("launcher", o->launcher,
                  "Launcher line after --, e.g. -- mpiexec -n 8 -hosts a,b (default: $MSTEP_MPIEXEC, else " MSTEP_DEFAULT_MPIEXEC " -n 2)");
  cmd->footer("Examples:\n  mstep calibrate -o params.json\n  mstep calibrate -o params.json -- mpiexec -n 8 -hosts a,b");
  cmd->callback([o] { run_calibrate(*o); });
}

}  // namespace mstep::cli
