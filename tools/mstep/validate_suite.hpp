// The suite of `mstep validate` (share/validate/suite.json): the example programs, their sizes and
// rank counts, and the S-moved experiment; which of its runs the options select; where its
// programs are; and the one way validate runs a step (a child process with its output in a log).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mstep::cli {

// One line: "FILE: key 'cases[1].sizes[0].args': expected an array of strings" and the like.
class SuiteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SuiteSize {
  std::string label;              // file-name safe: [A-Za-z0-9._-]
  std::vector<std::string> args;  // the program's arguments
  std::vector<int> ranks;         // rank counts to run it at
  bool quick = false;             // the size of --quick
};

struct SuiteCase {
  std::string name;     // file-name safe
  std::string program;  // absolute, or a name looked up in bin/../examples
  std::vector<SuiteSize> sizes;
  // The argument (an index into every size's args, each a positive integer there) that
  // multiplies the run's length without changing its messages, an iteration count: what
  // tests/bench/sensitivity_suite.sh scales so that a point's run is long enough to measure.
  std::optional<std::size_t> length_arg;
};

// The same program with the rendezvous threshold S moved, recalibrated.
struct SuiteSMoved {
  std::string label;                       // file-name safe: DIR/params-LABEL.json
  std::map<std::string, std::string> env;  // e.g. UCX_RNDV_THRESH=1m
  // Case name -> size labels to repeat (empty: every size of the case).
  std::vector<std::pair<std::string, std::vector<std::string>>> runs;
};

struct Suite {
  std::string path;
  std::vector<SuiteCase> cases;
  bool has_s_moved = false;
  SuiteSMoved s_moved;
  const SuiteCase* find(std::string_view name) const;
};

// `name` stands for the file in messages. SuiteError on anything wrong or unknown.
Suite parse_suite(std::string_view text, const std::string& name);
Suite read_suite(const std::filesystem::path& file);

// Which runs to make: --only, --ranks, --quick.
struct RunFilter {
  std::vector<std::string> only;  // case names; empty: all
  std::vector<int> ranks;         // empty: every rank count of the suite (--quick: 2 only)
  bool quick = false;             // the quick size of each case (else the first at 2 ranks)
};

// One run to make: a case at one size and rank count.
struct Planned {
  const SuiteCase* c = nullptr;
  const SuiteSize* size = nullptr;
  int ranks = 0;
};

// The main table's runs: every selected case at every size (or its quick size) and rank count.
std::vector<Planned> plan_main(const Suite& suite, const RunFilter& f);
// The S-moved experiment's runs: the sizes it names, at the selected rank counts.
std::vector<Planned> plan_s_moved(const Suite& suite, const RunFilter& f);

// This executable (from /proc/self/exe).
std::filesystem::path self_exe();
// bin/../share/mstep/validate/suite.json when installed, else the source tree's suite.
std::string default_suite();
// An absolute program as it is; a name in bin/../examples beside this mstep.
std::filesystem::path program_path(const std::string& program);

// Runs `argv` with `env` added to the environment, stdin from /dev/null and stdout and stderr
// appended to `log`, in a process group of its own. Returns the exit code (128 + signal when
// killed, 127 when it cannot start). While it runs, Ctrl-C marks the run as interrupted and is
// passed on to the group (the launcher ends its ranks). After `timeout_s` seconds (0: never) the
// group is sent SIGTERM, then SIGKILL 5 s later, and `timed_out` is set: an MPI job can hang in
// MPI_Finalize (UCX's TCP transport, openucx/ucx#8738: seen here after a run had ended).
int run_logged(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               const std::filesystem::path& log, double timeout_s = 0, bool* timed_out = nullptr);
// True once Ctrl-C or SIGTERM arrived during run_logged.
bool interrupted();

// The command as one line, for messages.
std::string command_line(const std::vector<std::string>& argv);

}  // namespace mstep::cli
