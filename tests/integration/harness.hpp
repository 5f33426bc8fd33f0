// Integration test harness: child processes (mpiexec jobs under `mstep record`), per-test
// directories, and readers for `mstep stats/dump --format json`. Shared by every test_*.cpp of
// mstep_integration_tests (Catch2 v2; CATCH_CONFIG_MAIN is in harness.cpp).
//
// Every expected number below comes from the structure of the test program it names (its header
// comment lists its MPI calls) and from the byte conventions of share/trace-format.md.
//
// Test cases that check one recording from several sides use plain blocks with an INFO, not
// SECTIONs: Catch2 runs a test case once per SECTION, and each run would record the job again.
#pragma once

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace mstep_it {


// ---------------------------------------------------------------------------------------------
// Child processes

using Env = std::vector<std::pair<std::string, std::string>>;

struct Result {
  int code = -1;      // exit status, or 128 + signal
  std::string out;    // stdout
  std::string err;    // stderr
  double seconds = 0;
  bool timed_out = false;
};

inline std::string describe(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

// A command running with its stdout and stderr captured separately, in a process group of its
// own (so that a timeout can end mpiexec and every rank at once).
class Child {
 public:
  Child(const std::vector<std::string>& argv, const Env& env = {}, const fs::path& cwd = {})
      : what_(describe(argv)), start_(std::chrono::steady_clock::now()) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const int devnull = ::open("/dev/null", O_RDONLY);
      ::dup2(devnull, 0);
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      // A clean environment for mstep: nothing preloaded or configured unless the test says so.
      ::unsetenv("LD_PRELOAD");
      for (const char* v : {"MSTEP_DIR", "MSTEP_ENABLE", "MSTEP_BUFFER", "MSTEP_STACK_DEPTH",
                            "MSTEP_ZSTD_LEVEL", "MSTEP_CLOCK", "MSTEP_DELAY_L", "MSTEP_DELAY_O",
                            "MSTEP_DELAY_GAP", "MSTEP_DELAY_PER_BYTE", "MSTEP_DELAY_PAIRS",
                            "MSTEP_BARRIER", "MSTEP_BCAST", "MSTEP_MPIEXEC"})
        ::unsetenv(v);
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);
    ::close(out[1]);
    ::close(err[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) ::close(out_fd_);
    if (err_fd_ >= 0) ::close(err_fd_);
  }

  pid_t pid() const { return pid_; }

  // Reads both pipes until they close and reaps the child; after `timeout_s` kills the whole
  // process group (and reports timed_out).
  Result wait(double timeout_s = 150) {
    Result r;
    const auto deadline = start_ + std::chrono::duration<double>(timeout_s);
    bool out_open = true, err_open = true;
    while (out_open || err_open) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        r.timed_out = true;
        ::kill(-pid_, SIGKILL);
        break;
      }
      pollfd fds[2] = {{out_open ? out_fd_ : -1, POLLIN, 0}, {err_open ? err_fd_ : -1, POLLIN, 0}};
      const int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
      if (n < 0 && errno != EINTR) break;
      char buf[65536];
      for (int i = 0; i < 2; ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
        if (got > 0) {
          (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(got));
        } else {
          (i == 0 ? out_open : err_open) = false;
        }
      }
    }
    int status = 0;
    if (r.timed_out) {
      ::waitpid(pid_, &status, 0);
    } else {
      // The pipes closed: the child is ending (a grandchild may hold them, so bound the wait).
      while (::waitpid(pid_, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
          r.timed_out = true;
          ::kill(-pid_, SIGKILL);
          ::waitpid(pid_, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    reaped_ = true;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (r.timed_out) {
      r.err += "\n[test driver: killed after " + std::to_string(timeout_s) + " s: " + what_ + "]\n";
      // Every rank of a killed job, too (they are in the group, but be sure).
      ::kill(-pid_, SIGKILL);
    }
    return r;
  }

 private:
  std::string what_;
  std::chrono::steady_clock::time_point start_;
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  bool reaped_ = false;
};

inline Result run(const std::vector<std::string>& argv, const Env& env = {}, const fs::path& cwd = {},
           double timeout_s = 150) {
  Child c(argv, env, cwd);
  Result r = c.wait(timeout_s);
  UNSCOPED_INFO("ran: " << describe(argv) << "\n  exit " << r.code << " after " << r.seconds
                        << " s\n  stdout: " << r.out.substr(0, 4000)
                        << "\n  stderr: " << r.err.substr(0, 4000));
  return r;
}

// Asks `done` every `poll` until it says yes or `seconds` have passed; its last answer.
template <class Done>
bool wait_until(Done done, double seconds, std::chrono::milliseconds poll = std::chrono::milliseconds(100)) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    std::this_thread::sleep_for(poll);
  }
  return true;
}

// Whether a process whose command line matches the regular expression `pattern` runs (pgrep -f).
inline bool running(const std::string& pattern, const fs::path& cwd) {
  return !run({"pgrep", "-f", pattern}, {}, cwd, 10).out.empty();
}

// `parent` (an mstep that starts jobs) killed outright, by SIGKILL as a harness's timeout does,
// once a process of its job (matching `pattern`) runs: that process ends too, within 20 s.
inline void check_job_ends_with(Child& parent, const std::string& pattern, const fs::path& cwd) {
  REQUIRE(wait_until([&] { return running(pattern, cwd); }, 30));
  REQUIRE(::kill(parent.pid(), SIGKILL) == 0);
  parent.wait(10);
  CHECK(wait_until([&] { return !running(pattern, cwd); }, 20));
}

inline std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) v.push_back(line);
  return v;
}

// Whether a line of `text` holds both `a` and `b`.
inline bool any_line_has(const std::string& text, const std::string& a, const std::string& b = "") {
  for (const auto& l : lines_of(text))
    if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Paths, per-test directories

inline const std::string kMstep = MSTEP_BIN;
inline const std::string kLib = MSTEP_LIB;
inline const std::string kShim = YIELD_SHIM;
inline const std::string kMpiexec = MPIEXEC;

inline std::string prog(const std::string& name) { return std::string(PROG_DIR) + "/" + name; }

inline std::vector<fs::path> g_dirs_of_test;  // removed when the test case passes

// A fresh directory for the running test case, unique to this process.
inline fs::path test_dir() {
  std::string name = Catch::getResultCapture().getCurrentTestName();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  const fs::path dir = fs::path(WORK_DIR) / (name.substr(0, 80) + "." + std::to_string(::getpid()) +
                                             "." + std::to_string(g_dirs_of_test.size()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  g_dirs_of_test.push_back(dir);
  return dir;
}


// ---------------------------------------------------------------------------------------------
// mstep

// mstep record -o DIR [opts] -- COMMAND...
inline std::vector<std::string> record_argv(const fs::path& dir, const std::vector<std::string>& opts,
                                     const std::vector<std::string>& command) {
  std::vector<std::string> argv{kMstep, "record", "-o", dir.string()};
  argv.insert(argv.end(), opts.begin(), opts.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// mstep record -o DIR [opts] -- mpiexec.mpich -n NP PROG ARGS
inline Result record(const fs::path& dir, int np, const std::vector<std::string>& program,
              const Env& env = {}, const std::vector<std::string>& opts = {}, double timeout_s = 150) {
  std::vector<std::string> argv = record_argv(dir, opts, {kMpiexec, "-n", std::to_string(np)});
  argv.insert(argv.end(), program.begin(), program.end());
  return run(argv, env, dir.parent_path(), timeout_s);
}

// The same job without mstep.
inline Result plain(const fs::path& cwd, int np, const std::vector<std::string>& program, const Env& env = {}) {
  std::vector<std::string> argv{kMpiexec, "-n", std::to_string(np)};
  argv.insert(argv.end(), program.begin(), program.end());
  return run(argv, env, cwd);
}

inline json parse_json(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const std::exception& e) {
    FAIL("not JSON (" << e.what() << "): " << text.substr(0, 2000));
  }
  return {};
}

// A trace's meta.json.
inline json read_meta(const fs::path& dir) {
  std::ifstream in(dir / "meta.json");
  std::stringstream text;
  text << in.rdbuf();
  return parse_json(text.str());
}

// A parameter file with LogGPS, MPM and linear sections, as mstep calibrate writes them: the
// integration tests' machine (L = o = g = 0.2 us, rendezvous from 8256 B). Returns `file`.
inline fs::path write_model_params(const fs::path& file) {
  std::ofstream(file) << R"({"L": 2e-7, "o": 2e-7, "Os": 0, "Or": 0, "g": 2e-7, "Gs": 1e-10, "Gl": 1e-10,
    "s": 8256, "S": 8256, "mpm": {"g": 1e-10, "L": 1e-6},
    "linear": {"boundary": 8256, "below": {"T0": 6e-7, "B": 1e10}, "above": {"T0": 2e-6, "B": 1e10}}})";
  return file;
}

// An environment in which mstep finds no default parameter file (for report and whatif).
inline Env no_default_params(const fs::path& home) { return {{"HOME", home.string()}, {"MSTEP_PARAMS", ""}}; }

// Nothing on stderr but, at most, the warning that the run's 8-byte round trip differs from the
// calibration's: this machine changes speed from one period to the next, so a test that records
// and then calibrates (or the reverse) can get it in a healthy run.
inline bool quiet_but_for_speed(const std::string& err) {
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("mstep: warning: the run's 8-byte half round trip", 0) != 0) return false;
  return true;
}

// mstep COMMAND DIR ARGS... --format json: exit 0, nothing on stderr (but the speed warning), a JSON object.
inline json mstep_json(const std::string& command, const fs::path& dir, const std::vector<std::string>& args,
                       const Env& env) {
  std::vector<std::string> argv{kMstep, command, dir.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--format", "json"});
  const Result r = run(argv, env);
  CHECK(r.code == 0);
  INFO(r.err);
  CHECK(quiet_but_for_speed(r.err));
  json j = parse_json(r.out);
  REQUIRE(j.is_object());
  return j;
}

struct Stats {
  Result r;
  json j;
};

inline Stats stats(const fs::path& dir) {
  Stats s;
  s.r = run({kMstep, "stats", dir.string(), "--format", "json"});
  s.j = parse_json(s.r.out);
  return s;
}

// `mstep dump DIR --rank R --format json`: that rank's object.
inline json dump_rank(const fs::path& dir, int rank, int expect_code = 0) {
  const Result r = run({kMstep, "dump", dir.string(), "--rank", std::to_string(rank), "--format", "json"});
  CHECK(r.code == expect_code);
  json j = parse_json(r.out);
  REQUIRE(j.is_object());
  CHECK(j.at("rank") == rank);
  return j;
}

inline std::vector<json> events_of(const json& rank_dump, const std::string& op) {
  std::vector<json> v;
  for (const auto& e : rank_dump.at("events"))
    if (e.at("op") == op) v.push_back(e);
  return v;
}

inline std::string callsite_location(const json& rank_dump, std::uint64_t id) {
  for (const auto& c : rank_dump.at("callsites"))
    if (c.at("id") == id) return c.at("location").get<std::string>();
  return "(no call site " + std::to_string(id) + ")";
}

// A successful recording: the command's exit code, mstep's one-line summary.
inline void check_recorded(const Result& r, int ranks) {
  CHECK_FALSE(r.timed_out);
  CHECK(r.code == 0);
  CHECK(r.err.find("mstep: trace of " + std::to_string(ranks) + " ranks in ") != std::string::npos);
}

// threads.c (MPI_THREAD_MULTIPLE ping-pongs, `n` per thread) recorded at 2 ranks into `dir`; false,
// with a warning, where the MPI library does not provide MPI_THREAD_MULTIPLE (the test is skipped).
inline bool record_threads(const fs::path& dir, int n, const Env& env = {}) {
  const Result rec = record(dir, 2, {prog("threads"), std::to_string(n)}, env);
  if (rec.out.find("MPI_THREAD_MULTIPLE not provided") != std::string::npos) {
    WARN("threads: the MPI library does not provide MPI_THREAD_MULTIPLE; test skipped");
    return false;
  }
  check_recorded(rec, 2);
  return true;
}

// A complete trace: stats exit 0, no problems, every rank complete.
inline void check_complete(const Stats& s, int ranks) {
  CHECK(s.r.code == 0);
  CHECK(s.r.err.empty());
  CHECK(s.j.at("ranks") == ranks);
  CHECK(s.j.at("ranks_read") == ranks);
  CHECK(s.j.at("complete") == true);
  CHECK(s.j.at("problems").empty());
  REQUIRE(s.j.at("per_rank").size() == static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    CHECK(s.j["per_rank"][r].at("rank") == r);
    CHECK(s.j["per_rank"][r].at("status") == "complete");
  }
}

// Expected calls and bytes per MPI function of one rank.
struct Expect {
  json calls = json::object(), sent = json::object(), recv = json::object();
  void add(const std::string& op, std::uint64_t n, std::uint64_t s = 0, std::uint64_t r = 0) {
    calls[op] = calls.value(op, std::uint64_t{0}) + n;
    sent[op] = sent.value(op, std::uint64_t{0}) + s;
    recv[op] = recv.value(op, std::uint64_t{0}) + r;
  }
};

inline void check_rank(const json& stats_json, int rank, const Expect& e) {
  const json& pr = stats_json.at("per_rank").at(rank);
  INFO("rank " << rank);
  CHECK(pr.at("calls") == e.calls);
  CHECK(pr.at("bytes_sent") == e.sent);
  CHECK(pr.at("bytes_received") == e.recv);
}

inline int parse_int_after(const std::string& text, const std::string& key) {
  const auto pos = text.find(key);
  if (pos == std::string::npos) return -1;
  return std::atoi(text.c_str() + pos + key.size());
}

// Every request an Isend/Irecv created is completed by exactly one Wait/Test record of the same
// kind (receive half for receives), and no completion names an unknown request. With
// `sends` false only the receive requests are checked (see "send requests ... tied").
inline void check_requests_tied(const json& d, bool sends) {
  std::map<std::uint64_t, bool> created;  // id -> is receive
  std::map<std::uint64_t, int> completed;
  for (const auto& e : d.at("events")) {
    const std::string op = e.at("op");
    const std::uint64_t id = e.at("request");
    if (id == 0) continue;
    if (op == "MPI_Isend" || op == "MPI_Issend" || op == "MPI_Ibsend" || op == "MPI_Irsend") {
      CHECK(created.emplace(id, false).second);
    } else if (op == "MPI_Irecv") {
      CHECK(created.emplace(id, true).second);
    } else {
      INFO("completion " << e.dump());
      REQUIRE(created.count(id) == 1);
      CHECK(((e.at("flags").get<int>() & 2) != 0) == created[id]);
      ++completed[id];
    }
  }
  CHECK_FALSE(created.empty());
  for (const auto& [id, recv] : created) {
    if (!recv && !sends) continue;
    INFO("request " << id << (recv ? " (receive)" : " (send)"));
    CHECK(completed[id] == 1);
  }
}

// Every event's call site is in `file`.
inline void check_all_callsites_in(const json& d, const std::string& file) {
  for (const auto& e : d.at("events")) {
    if (e.at("op") == "mstep_flush") continue;
    const std::string where = callsite_location(d, e.at("callsite"));
    INFO(e.at("op") << " at " << where);
    CHECK(where.find(file + ":") != std::string::npos);
  }
}

// A failing mstep command: non-zero (or exactly `code`), nothing on stdout, one line on stderr
// starting with "mstep: ".
inline void check_one_line_error(const Result& r, int code = -1) {
  if (code >= 0) CHECK(r.code == code);
  else CHECK(r.code != 0);
  CHECK(r.out.empty());
  const auto l = lines_of(r.err);
  REQUIRE(l.size() == 1);
  CHECK(l[0].rfind("mstep: ", 0) == 0);
}

}  // namespace mstep_it
