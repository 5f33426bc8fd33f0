#include "tools/mstep/launcher.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace mstep::cli {

std::string default_launcher() {
  if (const char* env = std::getenv("MSTEP_MPIEXEC"); env && *env) return env;
  std::error_code ec;
  if (std::filesystem::exists(MSTEP_DEFAULT_MPIEXEC, ec)) return MSTEP_DEFAULT_MPIEXEC;
  return "mpiexec.mpich";
}

namespace {

volatile std::sig_atomic_t g_received = 0;
volatile pid_t g_launcher = 0;
struct sigaction g_old_int {}, g_old_term {};

void on_signal(int sig) {
  g_received = sig;
  if (sig == SIGTERM && g_launcher > 0) ::kill(g_launcher, SIGTERM);  // async-signal-safe
}

}  // namespace

LauncherSignals::LauncherSignals(pid_t launcher) {
  g_received = 0;
  g_launcher = launcher;
  struct sigaction act {};
  act.sa_handler = on_signal;
  ::sigemptyset(&act.sa_mask);
  ::sigaction(SIGINT, &act, &g_old_int);
  ::sigaction(SIGTERM, &act, &g_old_term);
}

LauncherSignals::~LauncherSignals() {
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  g_launcher = 0;
}

void LauncherSignals::launcher_ended() { g_launcher = 0; }

int LauncherSignals::received() { return g_received; }

void end_with_parent(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(128 + SIGTERM);  // it ended before the line above
}

}  // namespace mstep::cli
