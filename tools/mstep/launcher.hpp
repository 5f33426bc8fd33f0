// The MPI launcher that `mstep calibrate` and `mstep validate` start when none is given, and how
// an mstep that waits on a launcher (record, calibrate) treats the signals meant to stop it.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mstep::cli {

// $MSTEP_MPIEXEC where set (a name looked up in PATH, or a path); else the mpiexec.mpich found when
// mstep was built, where it still exists; else "mpiexec.mpich" looked up in PATH (an mstep copied to
// a machine whose MPICH lives elsewhere).
std::string default_launcher();

// While this mstep waits on `launcher` (its child): SIGINT and SIGTERM are noted, not fatal, and
// SIGTERM is passed on to the launcher, which ends its ranks. A terminal's Ctrl-C reaches the
// launcher itself (one process group), but a SIGTERM sent to mstep alone (`kill PID`, or the end
// of the `mstep validate` that started it: see `end_with_parent`) would otherwise leave the job
// running without anyone waiting for it. The previous handlers come back at scope exit.
class LauncherSignals {
 public:
  explicit LauncherSignals(pid_t launcher);
  ~LauncherSignals();
  LauncherSignals(const LauncherSignals&) = delete;
  LauncherSignals& operator=(const LauncherSignals&) = delete;
  // The launcher was reaped: nothing is passed on any more (its pid may be reused).
  void launcher_ended();
  // The last SIGINT or SIGTERM received while in scope; 0 if none.
  static int received();
};

// Changes to a launcher's environment: a value sets the variable, none unsets it.
using EnvChanges = std::vector<std::pair<std::string, std::optional<std::string>>>;

// `command` (a launcher line, looked up in PATH) with `env` applied, under a watchdog: when the
// phase rank 0 names in `phase_file` has not changed for `timeout_s` seconds (0: never), the
// launcher is stopped (SIGTERM, then SIGKILL 5 s later) and that phase is returned in `stuck`.
// The launcher's exit code, 128 + the signal that ended it, or 127 where it could not be run.
int run_watched(const std::vector<std::string>& command, const EnvChanges& env,
                const std::filesystem::path& phase_file, double timeout_s, std::string& stuck);

// In a child just forked, before its exec: SIGTERM to it when the process that forked it ends,
// whatever ended that (SIGKILL too). Where the parent is already gone, it exits at once.
void end_with_parent(pid_t parent);

}  // namespace mstep::cli
