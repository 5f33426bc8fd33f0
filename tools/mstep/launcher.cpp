#include "tools/mstep/launcher.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "tools/mstep/output.hpp"

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

int run_watched(const std::vector<std::string>& command, const EnvChanges& env,
                const std::filesystem::path& phase_file, double timeout_s, std::string& stuck) {
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  if (child < 0) fail(1, fmt::format("cannot fork: {}", std::strerror(errno)));
  if (child == 0) {
    for (const auto& [name, value] : env) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "mstep: cannot run '%s': %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  // The launcher gets the terminal's Ctrl-C itself; mstep waits for it to pass it on. A SIGTERM
  // to mstep alone is passed on.
  const LauncherSignals signals(child);
  int status = 0;
  std::string phase = "start";
  auto changed = std::chrono::steady_clock::now();
  auto term_sent = changed;
  bool terminating = false;
  for (;;) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child || (done < 0 && errno != EINTR)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto now = std::chrono::steady_clock::now();
    if (std::FILE* f = std::fopen(phase_file.c_str(), "r")) {
      char buf[64] = {};
      const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
      std::fclose(f);
      if (n > 0 && phase != std::string(buf, n)) phase.assign(buf, n), changed = now;
    }
    if (!terminating && timeout_s > 0 && now - changed > std::chrono::duration<double>(timeout_s)) {
      stuck = phase;
      ::kill(child, SIGTERM);
      terminating = true;
      term_sent = now;
    } else if (terminating && now - term_sent > std::chrono::seconds(5)) {
      ::kill(child, SIGKILL);
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void end_with_parent(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(128 + SIGTERM);  // it ended before the line above
}

}  // namespace mstep::cli
