// Integration tests: real `mpiexec.mpich` jobs recorded by `mstep record`, read back with
// `mstep stats --format json` and `mstep dump --format json`.
//
// Every expected number below comes from the structure of the test program it names (its header
// comment lists its MPI calls) and from the byte conventions of share/trace-format.md.
//
// Test cases that check one recording from several sides use plain blocks with an INFO, not
// SECTIONs: Catch2 runs a test case once per SECTION, and each run would record the job again.
#define CATCH_CONFIG_MAIN
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

namespace {

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

std::string describe(const std::vector<std::string>& argv) {
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
                            "MSTEP_ZSTD_LEVEL", "MSTEP_CLOCK"})
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

Result run(const std::vector<std::string>& argv, const Env& env = {}, const fs::path& cwd = {},
           double timeout_s = 150) {
  Child c(argv, env, cwd);
  Result r = c.wait(timeout_s);
  UNSCOPED_INFO("ran: " << describe(argv) << "\n  exit " << r.code << " after " << r.seconds
                        << " s\n  stdout: " << r.out.substr(0, 4000)
                        << "\n  stderr: " << r.err.substr(0, 4000));
  return r;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) v.push_back(line);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Paths, per-test directories

const std::string kMstep = MSTEP_BIN;
const std::string kLib = MSTEP_LIB;
const std::string kShim = YIELD_SHIM;
const std::string kMpiexec = MPIEXEC;

std::string prog(const std::string& name) { return std::string(PROG_DIR) + "/" + name; }

std::vector<fs::path> g_dirs_of_test;  // removed when the test case passes

// A fresh directory for the running test case, unique to this process.
fs::path test_dir() {
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

struct CleanupListener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    if (stats.totals.assertions.failed == 0) {
      std::error_code ec;
      for (const auto& d : g_dirs_of_test) fs::remove_all(d, ec);
    }
    g_dirs_of_test.clear();
  }
};
CATCH_REGISTER_LISTENER(CleanupListener)

// ---------------------------------------------------------------------------------------------
// mstep

// mstep record -o DIR [opts] -- COMMAND...
std::vector<std::string> record_argv(const fs::path& dir, const std::vector<std::string>& opts,
                                     const std::vector<std::string>& command) {
  std::vector<std::string> argv{kMstep, "record", "-o", dir.string()};
  argv.insert(argv.end(), opts.begin(), opts.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// mstep record -o DIR [opts] -- mpiexec.mpich -n NP PROG ARGS
Result record(const fs::path& dir, int np, const std::vector<std::string>& program,
              const Env& env = {}, const std::vector<std::string>& opts = {}, double timeout_s = 150) {
  std::vector<std::string> argv = record_argv(dir, opts, {kMpiexec, "-n", std::to_string(np)});
  argv.insert(argv.end(), program.begin(), program.end());
  return run(argv, env, dir.parent_path(), timeout_s);
}

// The same job without mstep.
Result plain(const fs::path& cwd, int np, const std::vector<std::string>& program, const Env& env = {}) {
  std::vector<std::string> argv{kMpiexec, "-n", std::to_string(np)};
  argv.insert(argv.end(), program.begin(), program.end());
  return run(argv, env, cwd);
}

json parse_json(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const std::exception& e) {
    FAIL("not JSON (" << e.what() << "): " << text.substr(0, 2000));
  }
  return {};
}

struct Stats {
  Result r;
  json j;
};

Stats stats(const fs::path& dir) {
  Stats s;
  s.r = run({kMstep, "stats", dir.string(), "--format", "json"});
  s.j = parse_json(s.r.out);
  return s;
}

// `mstep dump DIR --rank R --format json`: that rank's object.
json dump_rank(const fs::path& dir, int rank, int expect_code = 0) {
  const Result r = run({kMstep, "dump", dir.string(), "--rank", std::to_string(rank), "--format", "json"});
  CHECK(r.code == expect_code);
  json j = parse_json(r.out);
  REQUIRE(j.is_object());
  CHECK(j.at("rank") == rank);
  return j;
}

std::vector<json> events_of(const json& rank_dump, const std::string& op) {
  std::vector<json> v;
  for (const auto& e : rank_dump.at("events"))
    if (e.at("op") == op) v.push_back(e);
  return v;
}

std::string callsite_location(const json& rank_dump, std::uint64_t id) {
  for (const auto& c : rank_dump.at("callsites"))
    if (c.at("id") == id) return c.at("location").get<std::string>();
  return "(no call site " + std::to_string(id) + ")";
}

// A successful recording: the command's exit code, mstep's one-line summary.
void check_recorded(const Result& r, int ranks) {
  CHECK_FALSE(r.timed_out);
  CHECK(r.code == 0);
  CHECK(r.err.find("mstep: trace of " + std::to_string(ranks) + " ranks in ") != std::string::npos);
}

// A complete trace: stats exit 0, no problems, every rank complete.
void check_complete(const Stats& s, int ranks) {
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

void check_rank(const json& stats_json, int rank, const Expect& e) {
  const json& pr = stats_json.at("per_rank").at(rank);
  INFO("rank " << rank);
  CHECK(pr.at("calls") == e.calls);
  CHECK(pr.at("bytes_sent") == e.sent);
  CHECK(pr.at("bytes_received") == e.recv);
}

int parse_int_after(const std::string& text, const std::string& key) {
  const auto pos = text.find(key);
  if (pos == std::string::npos) return -1;
  return std::atoi(text.c_str() + pos + key.size());
}

// Every request an Isend/Irecv created is completed by exactly one Wait/Test record of the same
// kind (receive half for receives), and no completion names an unknown request. With
// `sends` false only the receive requests are checked (see "send requests ... tied").
void check_requests_tied(const json& d, bool sends) {
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

// ---------------------------------------------------------------------------------------------
// Expected results of collectives.c

// One round of collectives.c on a communicator of size n where this process has rank r.
void add_collective_round(Expect& e, std::uint64_t n, std::uint64_t r) {
  const std::uint64_t o = n - 1;  // the others
  auto blocks_of_others = [&](std::uint64_t except) {  // sum over i != except of 4 (i+1) bytes
    std::uint64_t s = 0;
    for (std::uint64_t i = 0; i < n; ++i)
      if (i != except) s += 4 * (i + 1);
    return s;
  };
  const bool root0 = r == 0, root_last = r == n - 1;
  e.add("MPI_Bcast", 1, root0 ? 40 * o : 0, root0 ? 0 : 40);                    // 10 int
  e.add("MPI_Reduce", 1, root_last ? 0 : 16, root_last ? 16 * o : 0);           // 4 int
  e.add("MPI_Allreduce", 2, 24 * o + 8 * o, 24 * o + 8 * o);                   // 3 double; 2 int
  e.add("MPI_Gather", 1, root0 ? 0 : 8, root0 ? 8 * o : 0);                     // 2 int
  e.add("MPI_Gatherv", 1, root0 ? 0 : 4 * (r + 1), root0 ? blocks_of_others(0) : 0);
  e.add("MPI_Scatter", 1, root0 ? 12 * o : 0, root0 ? 0 : 12);                  // 3 int
  e.add("MPI_Scatterv", 1, root0 ? blocks_of_others(0) : 0, root0 ? 0 : 4 * (r + 1));
  e.add("MPI_Allgather", 1, 4 * o, 4 * o);                                      // 1 int
  e.add("MPI_Allgatherv", 1, 4 * (r + 1) * o, blocks_of_others(r));
  e.add("MPI_Alltoall", 1, 8 * o, 8 * o);                                       // 2 int each
  e.add("MPI_Alltoallv", 1, blocks_of_others(r), 4 * (r + 1) * o);
  e.add("MPI_Reduce_scatter", 1, blocks_of_others(r), 4 * (r + 1) * o);
  e.add("MPI_Reduce_scatter_block", 1, 8 * o, 8 * o);                           // 2 int
  e.add("MPI_Barrier", 1);
}

// collectives.c at `size` ranks for world rank `w`.
Expect collectives_expect(int size, int w, bool all) {
  Expect e;
  e.add("MPI_Init", 1);
  const std::uint64_t half_n = w % 2 == 0 ? (size + 1) / 2 : size / 2, half_r = w / 2;
  if (all) add_collective_round(e, size, w);
  e.add("MPI_Comm_split", 1);
  add_collective_round(e, half_n, half_r);
  if (all) {
    e.add("MPI_Comm_dup", 1);
    e.add("MPI_Allreduce", 1, 4 * (size - 1), 4 * (size - 1));  // 1 int on the duplicate
  }
  e.add("MPI_Comm_free", all ? 2 : 1);
  e.add("MPI_Finalize", 1);
  return e;
}

void check_all_callsites_in(const json& d, const std::string& file) {
  for (const auto& e : d.at("events")) {
    if (e.at("op") == "mstep_flush") continue;
    const std::string where = callsite_location(d, e.at("callsite"));
    INFO(e.at("op") << " at " << where);
    CHECK(where.find(file + ":") != std::string::npos);
  }
}

}  // namespace

// =============================================================================================
// Point to point

TEST_CASE("p2p: exact calls, bytes, peers and call sites of blocking point-to-point", "[p2p]") {
  const fs::path dir = test_dir() / "trace";
  const int n = 10;  // ping-pong round trips
  const Result rec = record(dir, 2, {prog("p2p"), std::to_string(n)});
  check_recorded(rec, 2);
  const int k = parse_int_after(rec.out, "iprobe_calls=");  // rank 0's Iprobe calls
  REQUIRE(k >= 1);

  const Stats s = stats(dir);
  check_complete(s, 2);
  CHECK(s.j.at("command") == std::vector<std::string>{prog("p2p"), std::to_string(n)});

  // Rank 0: ping-pong N x (Send 64 B, Recv 64 B); Ssend 64 B; Bsend 40 B; Barrier; Rsend 16 B;
  // Sendrecv 20/20 B; Sendrecv_replace 24/24 B; Send 28 B (probed by rank 1); K Iprobe; Recv 8 B.
  Expect r0;
  r0.add("MPI_Init", 1);
  r0.add("MPI_Send", n + 1, 64 * n + 28, 0);
  r0.add("MPI_Recv", n + 1, 0, 64 * n + 8);
  r0.add("MPI_Ssend", 1, 64, 0);
  r0.add("MPI_Bsend", 1, 40, 0);
  r0.add("MPI_Barrier", 1);
  r0.add("MPI_Rsend", 1, 16, 0);
  r0.add("MPI_Sendrecv", 1, 20, 20);
  r0.add("MPI_Sendrecv_replace", 1, 24, 24);
  r0.add("MPI_Iprobe", k);
  r0.add("MPI_Finalize", 1);
  check_rank(s.j, 0, r0);
  // Rank 1: N x (Recv 64 B, Send 64 B); Recv 64 B (Ssend); Recv 40 B (Bsend); Irecv, Barrier,
  // Wait 16 B (Rsend); Sendrecv; Sendrecv_replace; Probe, Recv 28 B; Send 8 B (for the Iprobe).
  Expect r1;
  r1.add("MPI_Init", 1);
  r1.add("MPI_Recv", n + 3, 0, 64 * n + 64 + 40 + 28);
  r1.add("MPI_Send", n + 1, 64 * n + 8, 0);
  r1.add("MPI_Irecv", 1);
  r1.add("MPI_Barrier", 1);
  r1.add("MPI_Wait", 1, 0, 16);
  r1.add("MPI_Sendrecv", 1, 20, 20);
  r1.add("MPI_Sendrecv_replace", 1, 24, 24);
  r1.add("MPI_Probe", 1);
  r1.add("MPI_Finalize", 1);
  check_rank(s.j, 1, r1);

  const json d0 = dump_rank(dir, 0), d1 = dump_rank(dir, 1);
  CHECK(d0.at("status") == "complete");

  {
    INFO("ping-pong records name the partner, tag and size");
    const auto sends = events_of(d0, "MPI_Send");
    REQUIRE(sends.size() == static_cast<std::size_t>(n + 1));
    for (int i = 0; i < n; ++i) {
      CHECK(sends[i].at("peer") == 1);
      CHECK(sends[i].at("tag") == 1);
      CHECK(sends[i].at("send_bytes") == 64);
      CHECK(sends[i].at("comm") == 0);
    }
    const auto recvs = events_of(d1, "MPI_Recv");
    REQUIRE(recvs.size() == static_cast<std::size_t>(n + 3));
    for (int i = 0; i < n; ++i) {
      CHECK(recvs[i].at("peer") == 0);
      CHECK(recvs[i].at("tag") == 1);
      CHECK(recvs[i].at("recv_bytes") == 64);
    }
  }
  {
    INFO("Probe and Iprobe record the matched source and tag");
    const auto probe = events_of(d1, "MPI_Probe");
    REQUIRE(probe.size() == 1);
    CHECK(probe[0].at("peer") == 0);  // posted with MPI_ANY_SOURCE, MPI_ANY_TAG
    CHECK(probe[0].at("tag") == 8);
    CHECK(probe[0].at("flags") == 0);
    const auto iprobes = events_of(d0, "MPI_Iprobe");
    REQUIRE(iprobes.size() == static_cast<std::size_t>(k));
    for (int i = 0; i + 1 < k; ++i) CHECK(iprobes[i].at("flags") == 8);  // found nothing
    CHECK(iprobes.back().at("flags") == 0);
    CHECK(iprobes.back().at("peer") == 1);
    CHECK(iprobes.back().at("tag") == 9);
  }
  {
    INFO("Sendrecv writes a send record and a receive continuation");
    for (const json* d : {&d0, &d1}) {
      const int other = d == &d0 ? 1 : 0;
      const auto sr = events_of(*d, "MPI_Sendrecv");
      REQUIRE(sr.size() == 2);
      CHECK(sr[0].at("flags") == 0);
      CHECK(sr[0].at("peer") == other);
      CHECK(sr[0].at("tag") == 6);
      CHECK(sr[0].at("send_bytes") == 20);
      CHECK(sr[0].at("recv_bytes") == 0);
      CHECK(sr[1].at("flags") == 3);  // continuation + receive half
      CHECK(sr[1].at("peer") == other);
      CHECK(sr[1].at("tag") == 6);
      CHECK(sr[1].at("send_bytes") == 0);
      CHECK(sr[1].at("recv_bytes") == 20);
      const auto rep = events_of(*d, "MPI_Sendrecv_replace");
      REQUIRE(rep.size() == 2);
      CHECK(rep[0].at("send_bytes") == 24);
      CHECK(rep[1].at("flags") == 3);
      CHECK(rep[1].at("recv_bytes") == 24);
      CHECK(rep[1].at("tag") == 7);
    }
  }
  {
    INFO("the Rsend's receive is tied to its Wait");
    const auto irecv = events_of(d1, "MPI_Irecv");
    const auto wait = events_of(d1, "MPI_Wait");
    REQUIRE(irecv.size() == 1);
    REQUIRE(wait.size() == 1);
    CHECK(irecv[0].at("request") != 0);
    CHECK(wait[0].at("request") == irecv[0].at("request"));
    CHECK(wait[0].at("flags") == 2);
    CHECK(wait[0].at("peer") == 0);
    CHECK(wait[0].at("tag") == 5);
    CHECK(wait[0].at("recv_bytes") == 16);
  }
  {
    INFO("M-steps: one per ping-pong round, then the later phases");
    // format/step_tracker.hpp: a send side after a receive closes the step at that receive; a
    // collective closes the step it is in; finish() splits off the work after the last receive.
    // Rank 0: N steps {Send, Recv}; {Ssend, Bsend, Barrier}; {Rsend, Sendrecv};
    //   {Sendrecv_replace}; {Send, Iprobe..., Recv}; {Finalize}                     = N + 5.
    // Rank 1: {Recv}; N-1 x {Send, Recv}; {Send, Recv, Recv}; {Irecv, Barrier}; {Wait};
    //   {Sendrecv}; {Sendrecv_replace, Probe, Recv}; {Send, Finalize}               = N + 6.
    for (int rank = 0; rank < 2; ++rank) {
      INFO("rank " << rank);
      const json& d = rank == 0 ? d0 : d1;
      const json& steps = d.at("steps");
      CHECK(steps.size() == static_cast<std::size_t>(n + (rank == 0 ? 5 : 6)));
      CHECK(s.j["per_rank"][rank].at("steps") == steps.size());
      std::uint64_t in = 0, out = 0, sent = 0, received = 0;
      for (std::size_t i = 0; i < steps.size(); ++i) {
        CHECK(steps[i].at("index") == i + 1);
        CHECK(steps[i].at("begin_s").get<double>() <= steps[i].at("end_s").get<double>());
        if (i + 1 < steps.size()) CHECK(steps[i].at("end_s") == steps[i + 1].at("begin_s"));
        for (int p : steps[i].at("partners")) CHECK((p == 0 || p == 1));
        in += steps[i].at("bytes_in").get<std::uint64_t>();
        out += steps[i].at("bytes_out").get<std::uint64_t>();
      }
      for (const auto& [op, b] : s.j["per_rank"][rank].at("bytes_sent").items()) sent += b.get<std::uint64_t>();
      for (const auto& [op, b] : s.j["per_rank"][rank].at("bytes_received").items()) received += b.get<std::uint64_t>();
      CHECK(in == received);
      CHECK(out == sent);
      CHECK(out == (rank == 0 ? 64 * n + 192 : 64 * n + 8 + 20 + 24));
      // The ping-pong rounds.
      for (int i = 0; i < n; ++i) {
        INFO("step " << i + 1);
        const json& st = steps.at(i);
        CHECK(st.at("partners") == std::vector<int>{0, 1});
        CHECK(st.at("bytes_in") == 64);
        CHECK(st.at("msgs_in") == 1);
        const bool first_of_rank1 = rank == 1 && i == 0;  // rank 1 receives first
        CHECK(st.at("bytes_out") == (first_of_rank1 ? 0 : 64));
        CHECK(st.at("msgs_out") == (first_of_rank1 ? 0 : 1));
      }
      const json& after = steps.at(n);
      if (rank == 0) {  // Ssend 64 + Bsend 40, then the Barrier (no bytes, one message each way)
        CHECK(after.at("bytes_out") == 104);
        CHECK(after.at("msgs_out") == 3);
        CHECK(after.at("bytes_in") == 0);
      } else {  // the last pong out, the Ssend's and the Bsend's messages in
        CHECK(after.at("bytes_out") == 64);
        CHECK(after.at("bytes_in") == 104);
        CHECK(after.at("msgs_in") == 2);
      }
    }
  }
  {
    INFO("every call site resolves to p2p.c");
    check_all_callsites_in(d0, "p2p.c");
    check_all_callsites_in(d1, "p2p.c");
    // The Ssend is on its own line: its call site is a different one than the Bsend's.
    const auto ss = events_of(d0, "MPI_Ssend"), bs = events_of(d0, "MPI_Bsend");
    REQUIRE(ss.size() == 1);
    REQUIRE(bs.size() == 1);
    CHECK(ss[0].at("callsite") != bs[0].at("callsite"));
    CHECK(callsite_location(d0, ss[0].at("callsite")).rfind("main (p2p.c:", 0) == 0);
  }
}

TEST_CASE("exit codes of the recorded command pass through mstep record", "[record]") {
  const fs::path base = test_dir();
  SECTION("an MPI program that returns 3 after MPI_Finalize") {
    const fs::path dir = base / "exit3";
    const Result rec = record(dir, 2, {prog("p2p"), "2", "3"});
    CHECK(rec.code == 3);
    // The trace itself is complete: the program did finalize.
    const Stats s = stats(dir);
    check_complete(s, 2);
    CHECK(s.j["per_rank"][0]["calls"].value("MPI_Send", 0) == 3);  // 2 pings + 1 probed
  }
  SECTION("a command that is no MPI program") {
    const fs::path dir = base / "sh";
    const Result r = run(record_argv(dir, {}, {"sh", "-c", "exit 7"}), {}, base);
    CHECK(r.code == 7);
    CHECK(r.err.find("mstep: no trace was written to") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "meta.json"));
  }
  SECTION("a command that does not exist") {
    const Result r = run(record_argv(base / "none", {}, {(base / "no-such-program").string()}), {}, base);
    CHECK(r.code == 127);
    CHECK(r.err.find("mstep: cannot run") != std::string::npos);
  }
}

// =============================================================================================
// Nonblocking

TEST_CASE("nonblocking: Wait, Waitall, Waitany, Waitsome and the Test family", "[nonblocking]") {
  const fs::path dir = test_dir() / "trace";
  const Result rec = record(dir, 2, {prog("nonblocking")});
  check_recorded(rec, 2);
  const Stats s = stats(dir);
  check_complete(s, 2);

  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    // The program prints how often each polling loop called its function.
    const auto pos = rec.out.find("rank " + std::to_string(rank) + " waitsome=");
    REQUIRE(pos != std::string::npos);
    const std::string line = rec.out.substr(pos, rec.out.find('\n', pos) - pos);
    const int waitsome = parse_int_after(line, "waitsome="), test = parse_int_after(line, " test="),
              testall = parse_int_after(line, "testall="), testany = parse_int_after(line, "testany="),
              testsome = parse_int_after(line, "testsome=");
    REQUIRE(std::min({waitsome, test, testall, testany, testsome}) >= 1);
    CHECK(testany >= 2);  // Testany completes one request per successful call

    // Sends: A 4 + B 2x16 + C 8 + D 12 + E 4 + F 4 + G 4 + H 4 + I 20 + 24 = 116 B over 11 Isend.
    // Receives completed: Wait A 4 + J 4; Waitall B 32 + I 20 + 24; Waitany 8; Waitsome 12;
    // Test 4; Testall 4; Testany 4; Testsome 4.
    Expect e;
    e.add("MPI_Init", 1);
    e.add("MPI_Irecv", 12);
    e.add("MPI_Isend", 11, 116, 0);
    e.add("MPI_Issend", 1, 4, 0);
    e.add("MPI_Wait", 5, 0, 8);
    e.add("MPI_Waitall", 2, 0, 32 + 44);
    e.add("MPI_Waitany", 2, 0, 8);
    e.add("MPI_Waitsome", waitsome, 0, 12);
    e.add("MPI_Test", test, 0, 4);
    e.add("MPI_Testall", testall, 0, 4);
    e.add("MPI_Testany", testany, 0, 4);
    e.add("MPI_Testsome", testsome, 0, 4);
    e.add("MPI_Finalize", 1);
    check_rank(s.j, rank, e);

    const json d = dump_rank(dir, rank);
    check_requests_tied(d, false);
    check_all_callsites_in(d, "nonblocking.c");
    const int other = 1 - rank;

    // Waitall: one record per request, the first is the call, the others continuations.
    const auto wa = events_of(d, "MPI_Waitall");
    REQUIRE_FALSE(wa.empty());
    CHECK((wa[0].at("flags").get<int>() & 1) == 0);
    CHECK(std::count_if(wa.begin(), wa.end(), [](const json& x) { return (x.at("flags").get<int>() & 1) == 0; }) == 2);
    // B with statuses, then I with MPI_STATUSES_IGNORE and wildcard receives: the receive records
    // still carry the actual source, tag and size.
    std::vector<std::tuple<int, int, int>> got;  // tag, peer, bytes of the receive records
    for (const auto& e2 : wa)
      if (e2.at("flags").get<int>() & 2) got.emplace_back(e2.at("tag"), e2.at("peer"), e2.at("recv_bytes"));
    const std::vector<std::tuple<int, int, int>> want{
        {11, other, 16}, {12, other, 16}, {19, other, 20}, {20, other, 24}};
    CHECK(got == want);
    // The wildcard Irecvs were posted with MPI_ANY_SOURCE (-2) and MPI_ANY_TAG (-1).
    const auto irecv = events_of(d, "MPI_Irecv");
    REQUIRE(irecv.size() == 12);
    CHECK(irecv[9].at("peer") == -2);
    CHECK(irecv[10].at("peer") == -2);
    CHECK(irecv[9].at("tag") == -1);
    CHECK(irecv[0].at("peer") == other);

    // Test: every call but the last found nothing (flag 8); the last completed the receive.
    const auto tests = events_of(d, "MPI_Test");
    REQUIRE(tests.size() == static_cast<std::size_t>(test));
    for (int i = 0; i + 1 < test; ++i) CHECK(tests[i].at("flags") == 8);
    CHECK(tests.back().at("flags") == 2);
    CHECK(tests.back().at("tag") == 15);
    CHECK(tests.back().at("peer") == other);
    // Testall: the successful call completes both requests (2 records), the others are empty.
    const auto ta = events_of(d, "MPI_Testall");
    CHECK(ta.size() == static_cast<std::size_t>(testall + 1));
    CHECK(std::count_if(ta.begin(), ta.end(), [](const json& x) { return x.at("flags") == 8; }) ==
          testall - 1);
    // Testany/Testsome: the receive completion carries tags 17 and 18.
    for (const auto& [op, tag] : {std::pair<std::string, int>{"MPI_Testany", 17}, {"MPI_Testsome", 18},
                                  {"MPI_Waitany", 13}, {"MPI_Waitsome", 14}}) {
      INFO(op);
      int receives = 0;
      for (const auto& x : events_of(d, op))
        if (x.at("flags").get<int>() & 2) {
          ++receives;
          CHECK(x.at("tag") == tag);
          CHECK(x.at("peer") == other);
        }
      CHECK(receives == 1);
    }
  }
}

// MPICH hands out one shared handle (0x6c000001, a "lightweight" pre-completed request) for every
// Isend that completed at once. The recorder keeps the requests behind one handle in order; when
// it kept one per handle, a Waitall over two such Isends wrote one record for the two.
TEST_CASE("nonblocking: send requests are tied to their completions", "[nonblocking]") {
  const fs::path dir = test_dir() / "trace";
  check_recorded(record(dir, 2, {prog("nonblocking")}), 2);
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    const json d = dump_rank(dir, rank);
    check_requests_tied(d, true);
    CHECK(events_of(d, "MPI_Waitall").size() == 8);  // 4 requests in each of the 2 calls
  }
}

// =============================================================================================
// Collectives

TEST_CASE("collectives at 2 ranks: calls, logical bytes, roots and communicators", "[collectives]") {
  const fs::path dir = test_dir() / "trace";
  const Result rec = record(dir, 2, {prog("collectives")});
  check_recorded(rec, 2);
  CHECK(rec.out.find("collectives: 2 ranks, ok") != std::string::npos);
  const Stats s = stats(dir);
  check_complete(s, 2);
  for (int w = 0; w < 2; ++w) check_rank(s.j, w, collectives_expect(2, w, true));

  for (int w = 0; w < 2; ++w) {
    INFO("rank " << w);
    const json d = dump_rank(dir, w);
    // Every collective closes the step it is in: 2 rounds of 15, the Allreduce on the duplicate,
    // and the last step {Comm_free, Comm_free, Finalize}.
    CHECK(d.at("steps").size() == 32);
    CHECK(s.j["per_rank"][w].at("steps") == 32);
    check_all_callsites_in(d, "collectives.c");
    // Communicators: world (0, both ranks), the split one (this rank alone), the duplicate.
    std::map<int, std::vector<int>> comms;
    for (const auto& c : d.at("comms")) comms[c.at("id")] = c.at("world_ranks").get<std::vector<int>>();
    REQUIRE(comms.count(0) == 1);
    CHECK(comms[0] == std::vector<int>{0, 1});
    const auto split = events_of(d, "MPI_Comm_split");
    REQUIRE(split.size() == 1);
    const int half_id = split[0].at("peer");  // the new communicator's id
    CHECK(half_id > 0);
    CHECK(comms[half_id] == std::vector<int>{w});
    const auto dup = events_of(d, "MPI_Comm_dup");
    REQUIRE(dup.size() == 1);
    const int dup_id = dup[0].at("peer");
    CHECK(dup_id != half_id);
    CHECK(comms[dup_id] == std::vector<int>{0, 1});
    // The Bcasts: world first (root 0), then the split communicator (root: this rank).
    const auto bc = events_of(d, "MPI_Bcast");
    REQUIRE(bc.size() == 2);
    CHECK(bc[0].at("comm") == 0);
    CHECK(bc[0].at("peer") == 0);
    CHECK(bc[0].at("flags") == (w == 0 ? 4 : 0));
    CHECK(bc[1].at("comm") == half_id);
    CHECK(bc[1].at("peer") == w);
    CHECK(bc[1].at("flags") == 4);
    // Reduce to the last rank of world: rank 1 is the root.
    const auto red = events_of(d, "MPI_Reduce");
    REQUIRE(red.size() == 2);
    CHECK(red[0].at("peer") == 1);
    CHECK(red[0].at("flags") == (w == 1 ? 4 : 0));
    // The Allreduce on the duplicate names the duplicate.
    const auto ar = events_of(d, "MPI_Allreduce");
    REQUIRE(ar.size() == 5);
    CHECK(ar[4].at("comm") == dup_id);
    const auto fr = events_of(d, "MPI_Comm_free");
    REQUIRE(fr.size() == 2);
    CHECK(fr[0].at("comm") == dup_id);
    CHECK(fr[1].at("comm") == half_id);
  }
}

TEST_CASE("collectives at 4 ranks: partners of a split communicator are world ranks", "[collectives][4ranks]") {
  const fs::path dir = test_dir() / "trace";
  // Stacked after libmstep.so: blocking calls yield instead of spinning (4 ranks, 2 cores).
  const Result rec = record(dir, 4, {prog("collectives")}, {{"LD_PRELOAD", kShim}});
  check_recorded(rec, 4);
  CHECK(rec.out.find("collectives: 4 ranks, ok") != std::string::npos);
  const Stats s = stats(dir);
  check_complete(s, 4);
  for (int w = 0; w < 4; ++w) check_rank(s.j, w, collectives_expect(4, w, true));

  for (int w = 0; w < 4; ++w) {
    INFO("rank " << w);
    const json d = dump_rank(dir, w);
    const std::vector<int> same_parity{w % 2, w % 2 + 2};
    std::map<int, std::vector<int>> comms;
    for (const auto& c : d.at("comms")) comms[c.at("id")] = c.at("world_ranks").get<std::vector<int>>();
    CHECK(comms[0] == std::vector<int>{0, 1, 2, 3});
    const int half_id = events_of(d, "MPI_Comm_split").at(0).at("peer");
    CHECK(comms[half_id] == same_parity);
    // On the split communicator, Bcast's root is its rank 0 and Reduce's its rank 1: world ranks
    // w%2 and w%2+2.
    const auto bc = events_of(d, "MPI_Bcast");
    REQUIRE(bc.size() == 2);
    CHECK(bc[1].at("comm") == half_id);
    CHECK(bc[1].at("peer") == w % 2);
    CHECK(bc[1].at("flags") == (w < 2 ? 4 : 0));
    CHECK(bc[1].at("send_bytes") == (w < 2 ? 40 : 0));
    const auto red = events_of(d, "MPI_Reduce");
    REQUIRE(red.size() == 2);
    CHECK(red[0].at("peer") == 3);
    CHECK(red[1].at("peer") == w % 2 + 2);
    CHECK(red[1].at("flags") == (w >= 2 ? 4 : 0));
    const auto gv = events_of(d, "MPI_Gatherv");
    REQUIRE(gv.size() == 2);
    CHECK(gv[0].at("recv_bytes") == (w == 0 ? 4 * (2 + 3 + 4) : 0));
    CHECK(gv[1].at("recv_bytes") == (w < 2 ? 4 * 2 : 0));
  }
}

TEST_CASE("collectives on a split communicator only: M-step partners are world ranks", "[collectives][4ranks][steps]") {
  const fs::path dir = test_dir() / "trace";
  const Result rec = record(dir, 4, {prog("collectives"), "split"}, {{"LD_PRELOAD", kShim}});
  check_recorded(rec, 4);
  const Stats s = stats(dir);
  check_complete(s, 4);
  for (int w = 0; w < 4; ++w) {
    INFO("rank " << w);
    check_rank(s.j, w, collectives_expect(4, w, false));
    const json d = dump_rank(dir, w);
    CHECK(d.at("steps").size() == 16);  // 15 collectives, each closing a step; {Comm_free, Finalize}
    // Every collective of the run is on {w%2, w%2+2}: no step may name another rank, and the
    // other member of the pair must appear (a comm-rank instead of a world rank would give {0,1}).
    std::set<int> partners;
    for (const auto& st : d.at("steps"))
      for (int p : st.at("partners")) partners.insert(p);
    const int mate = w % 2 == 0 ? (w == 0 ? 2 : 0) : (w == 1 ? 3 : 1);
    CHECK(partners.count(mate) == 1);
    for (int p : partners) {
      INFO("partner " << p);
      CHECK(p % 2 == w % 2);
    }
  }
}

// =============================================================================================
// Corner cases

TEST_CASE("corners: PROC_NULL, wildcards, datatypes, MPI_BOTTOM, STATUS_IGNORE", "[corners]") {
  const fs::path base = test_dir();
  const fs::path dir = base / "trace";
  const Result rec = record(dir, 2, {prog("corners")});
  check_recorded(rec, 2);
  {
    INFO("results and statuses are those MPI gives without mstep");
    const Result without = plain(base, 2, {prog("corners")});
    CHECK(without.code == 0);
    CHECK(without.out.find("recv any/any: rc=0 source=1 tag=42") != std::string::npos);
    CHECK(rec.out == without.out);
  }
  const Stats s = stats(dir);
  check_complete(s, 2);
  Expect r0;  // see corners.c
  r0.add("MPI_Init", 1);
  r0.add("MPI_Send", 3, 0 + 64 + 0, 0);              // PROC_NULL, vector, zero count
  r0.add("MPI_Recv", 4, 0, 0 + 12 + 20 + 4);         // PROC_NULL, any/any, BOTTOM, IGNORE
  r0.add("MPI_Irecv", 1);
  r0.add("MPI_Wait", 1, 0, 8);
  r0.add("MPI_Sendrecv", 2, 0 + 8, 0 + 8);           // PROC_NULL, IGNORE
  r0.add("MPI_Gather", 1, 0, 4096);                  // root: the other rank's log
  r0.add("MPI_Finalize", 1);
  check_rank(s.j, 0, r0);
  Expect r1;
  r1.add("MPI_Init", 1);
  r1.add("MPI_Send", 5, 0 + 12 + 8 + 20 + 4, 0);     // PROC_NULL, tag 42, 43, BOTTOM, tag 90
  r1.add("MPI_Recv", 3, 0, 0 + 64 + 0);              // PROC_NULL, vector, zero count
  r1.add("MPI_Sendrecv", 2, 8, 8);
  r1.add("MPI_Gather", 1, 4096, 0);
  r1.add("MPI_Finalize", 1);
  check_rank(s.j, 1, r1);

  const json d0 = dump_rank(dir, 0), d1 = dump_rank(dir, 1);
  {
    INFO("MPI_PROC_NULL: no partner, no bytes");
    for (const json* d : {&d0, &d1}) {
      const auto send = events_of(*d, "MPI_Send").at(0);
      CHECK(send.at("peer") == -1);
      CHECK(send.at("tag") == 30);
      CHECK(send.at("send_bytes") == 0);
      const auto recv = events_of(*d, "MPI_Recv").at(0);
      CHECK(recv.at("peer") == -1);
      CHECK(recv.at("recv_bytes") == 0);
      const auto sr = events_of(*d, "MPI_Sendrecv");
      REQUIRE(sr.size() == 4);
      CHECK(sr[0].at("peer") == -1);
      CHECK(sr[0].at("send_bytes") == 0);
      CHECK(sr[1].at("peer") == -1);
      CHECK(sr[1].at("recv_bytes") == 0);
      CHECK(sr[1].at("flags") == 3);
    }
  }
  {
    INFO("wildcard receives record the actual source and tag");
    const auto recv = events_of(d0, "MPI_Recv");
    REQUIRE(recv.size() == 4);
    CHECK(recv[1].at("peer") == 1);
    CHECK(recv[1].at("tag") == 42);
    CHECK(recv[1].at("recv_bytes") == 12);
    const auto irecv = events_of(d0, "MPI_Irecv").at(0);
    CHECK(irecv.at("peer") == -2);
    const auto wait = events_of(d0, "MPI_Wait").at(0);
    CHECK(wait.at("peer") == 1);
    CHECK(wait.at("tag") == 43);
    CHECK(wait.at("recv_bytes") == 8);
    CHECK(wait.at("request") == irecv.at("request"));
    // MPI_STATUS_IGNORE: mstep reads its own status.
    CHECK(recv[3].at("peer") == 1);
    CHECK(recv[3].at("tag") == 90);
    CHECK(recv[3].at("recv_bytes") == 4);
    for (const json* d : {&d0, &d1}) {
      const auto sr = events_of(*d, "MPI_Sendrecv");
      REQUIRE(sr.size() == 4);
      CHECK(sr[3].at("peer") == (d == &d0 ? 1 : 0));
      CHECK(sr[3].at("tag") == 91);
      CHECK(sr[3].at("recv_bytes") == 8);
    }
  }
  {
    INFO("derived datatypes, zero counts and MPI_BOTTOM are sized by the type");
    const auto s0 = events_of(d0, "MPI_Send");
    REQUIRE(s0.size() == 3);
    CHECK(s0[1].at("tag") == 60);
    CHECK(s0[1].at("send_bytes") == 64);  // 2 x vector(4 x 2 int)
    CHECK(s0[2].at("tag") == 70);
    CHECK(s0[2].at("peer") == 1);
    CHECK(s0[2].at("send_bytes") == 0);
    const auto r1v = events_of(d1, "MPI_Recv");
    REQUIRE(r1v.size() == 3);
    CHECK(r1v[1].at("recv_bytes") == 64);
    CHECK(r1v[1].at("peer") == 0);
    CHECK(r1v[2].at("tag") == 70);
    CHECK(r1v[2].at("peer") == 0);
    CHECK(r1v[2].at("recv_bytes") == 0);
    const auto s1 = events_of(d1, "MPI_Send");
    REQUIRE(s1.size() == 5);
    CHECK(s1[3].at("tag") == 80);
    CHECK(s1[3].at("send_bytes") == 20);  // MPI_BOTTOM + struct {int; double[2]}
    const auto r0b = events_of(d0, "MPI_Recv").at(2);
    CHECK(r0b.at("tag") == 80);
    CHECK(r0b.at("recv_bytes") == 20);
  }
}

// =============================================================================================
// Other languages

TEST_CASE("C++: a ring exchange", "[languages]") {
  const fs::path dir = test_dir() / "trace";
  const int iterations = 6;
  const Result rec = record(dir, 2, {prog("cxx_ring"), std::to_string(iterations)});
  check_recorded(rec, 2);
  CHECK(rec.out.find("cxx_ring: ok") != std::string::npos);
  const Stats s = stats(dir);
  check_complete(s, 2);
  for (int w = 0; w < 2; ++w) {
    Expect e;  // per iteration 32 doubles to the right and from the left, then Allreduce(1 long)
    e.add("MPI_Init", 1);
    e.add("MPI_Send", iterations, 256 * iterations, 0);
    e.add("MPI_Recv", iterations, 0, 256 * iterations);
    e.add("MPI_Allreduce", 1, 8, 8);
    e.add("MPI_Finalize", 1);
    check_rank(s.j, w, e);
    const json d = dump_rank(dir, w);
    const auto sends = events_of(d, "MPI_Send");
    REQUIRE(sends.size() == static_cast<std::size_t>(iterations));
    for (int i = 0; i < iterations; ++i) {
      CHECK(sends[i].at("tag") == i);
      CHECK(sends[i].at("peer") == 1 - w);
    }
    // The sends are made inside Ring::pass: the call site is in cxx_ring.cpp.
    CHECK(callsite_location(d, sends[0].at("callsite")).find("cxx_ring.cpp:") != std::string::npos);
    check_all_callsites_in(d, "cxx_ring.cpp");
  }
}

// 4 ranks on 2 cores: MPICH busy-polls, so every blocking call competes with a spinning rank. The
// yield shim (yield_shim.c, stacked after libmstep.so) must not change what mstep records.
TEST_CASE("C++ ring at 4 ranks, with and without the yield shim: the same trace", "[languages][4ranks]") {
  const fs::path base = test_dir();
  const int iterations = 100;
  const Result plain_run = record(base / "spin", 4, {prog("cxx_ring"), std::to_string(iterations)});
  check_recorded(plain_run, 4);
  const Result shim_run =
      record(base / "yield", 4, {prog("cxx_ring"), std::to_string(iterations)}, {{"LD_PRELOAD", kShim}});
  check_recorded(shim_run, 4);
  WARN("4-rank cxx_ring, " << iterations << " iterations, under mstep: " << plain_run.seconds
                           << " s spinning, " << shim_run.seconds << " s with the yield shim");
  for (const auto* sub : {"spin", "yield"}) {
    INFO(sub);
    const fs::path dir = base / sub;
    const Stats s = stats(dir);
    check_complete(s, 4);
    for (int w = 0; w < 4; ++w) {
      Expect e;  // cxx_ring.cpp: 32 doubles right and left per iteration, Allreduce(1 long)
      e.add("MPI_Init", 1);
      e.add("MPI_Send", iterations, 256 * iterations, 0);
      e.add("MPI_Recv", iterations, 0, 256 * iterations);
      e.add("MPI_Allreduce", 1, 8 * 3, 8 * 3);
      e.add("MPI_Finalize", 1);
      check_rank(s.j, w, e);
      const json d = dump_rank(dir, w);
      for (const auto& x : events_of(d, "MPI_Send")) CHECK(x.at("peer") == (w + 1) % 4);
      for (const auto& x : events_of(d, "MPI_Recv")) CHECK(x.at("peer") == (w + 3) % 4);
    }
  }
}

TEST_CASE("Fortran: calls reach the wrappers and call sites resolve to the .f90 file", "[languages][fortran]") {
#if !HAVE_FORTRAN
  WARN("no mpifort.mpich when this was configured: the Fortran test is skipped");
  return;
#else
  const fs::path dir = test_dir() / "trace";
  const Result rec = record(dir, 2, {prog("fortran_ring")});
  check_recorded(rec, 2);
  CHECK(rec.out.find("fortran_ring: total 10") != std::string::npos);
  const Stats s = stats(dir);
  check_complete(s, 2);
  for (int w = 0; w < 2; ++w) {
    Expect e;  // 4 x (8 integers = 32 B) each way; Bcast 4 integers from 0; Barrier; Allreduce 1
    e.add("MPI_Init", 1);
    e.add("MPI_Send", 4, 128, 0);
    e.add("MPI_Recv", 4, 0, 128);
    e.add("MPI_Bcast", 1, w == 0 ? 16 : 0, w == 0 ? 0 : 16);
    e.add("MPI_Barrier", 1);
    e.add("MPI_Allreduce", 1, 4, 4);
    e.add("MPI_Finalize", 1);
    check_rank(s.j, w, e);
    const json d = dump_rank(dir, w);
    const auto recvs = events_of(d, "MPI_Recv");
    REQUIRE(recvs.size() == 4);
    for (int i = 0; i < 4; ++i) {
      CHECK(recvs[i].at("tag") == i + 1);
      CHECK(recvs[i].at("peer") == 1 - w);
    }
    for (const char* op : {"MPI_Send", "MPI_Recv", "MPI_Bcast", "MPI_Barrier", "MPI_Allreduce"}) {
      const auto ev = events_of(d, op);
      REQUIRE_FALSE(ev.empty());
      const std::string where = callsite_location(d, ev[0].at("callsite"));
      INFO(op << " at " << where);
      CHECK(where.find("fortran_ring.f90:") != std::string::npos);
    }
  }
#endif
}

// =============================================================================================
// Runs that do not end well

namespace {

// The pid in a rank file's header: magic (8), version (2), body size (2), rank (4), size (4), pid.
long pid_in_rank_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char h[24] = {};
  if (!in.read(reinterpret_cast<char*>(h), sizeof h)) return -1;
  if (std::memcmp(h, "MSTEPTRC", 8) != 0) return -1;
  return static_cast<long>(h[20] | h[21] << 8 | h[22] << 16 | static_cast<unsigned long>(h[23]) << 24);
}

// Waits until both rank files hold frames beyond their header (more than `bytes`).
bool wait_for_frames(const fs::path& dir, std::uintmax_t bytes, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    const auto a = fs::file_size(dir / "rank-00000.mst", ec);
    const bool a_ok = !ec && a > bytes;
    const auto b = fs::file_size(dir / "rank-00001.mst", ec);
    if (a_ok && !ec && b > bytes) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Stats of a trace whose ranks died: exit 1, the JSON still printed, one warning line per problem
// naming the file; returns the JSON.
json check_damaged_stats(const fs::path& dir, const std::vector<std::string>& files) {
  const Stats s = stats(dir);
  CHECK(s.r.code == 1);
  CHECK_FALSE(s.j.at("problems").empty());
  const auto err = lines_of(s.r.err);
  REQUIRE_FALSE(err.empty());
  for (const auto& l : err) {
    INFO(l);
    CHECK(l.rfind("mstep: warning: ", 0) == 0);
  }
  for (const auto& f : files) {
    INFO("a warning names " << f);
    CHECK(std::any_of(err.begin(), err.end(), [&](const std::string& l) { return l.find(f) != std::string::npos; }));
  }
  return s.j;
}

void killed_run(int sig) {
  const fs::path dir = test_dir() / "trace";
  // 8k buffers: a frame every ~140 events, so frames reach the disk long before the kill.
  // Rank 1 pauses 50 us per round: some 10-20 thousand events per second and rank.
  Child job(record_argv(dir, {"--buffer", "8k"}, {kMpiexec, "-n", "2", prog("killed"), "60", "50"}),
            {}, dir.parent_path());
  const bool frames = wait_for_frames(dir, 2048, 60);
  REQUIRE(frames);
  const long victim = pid_in_rank_file(dir / "rank-00001.mst");
  REQUIRE(victim > 1);
  // Let more frames land, then kill rank 1's process only.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(::kill(static_cast<pid_t>(victim), sig) == 0);
  const Result r = job.wait(60);
  UNSCOPED_INFO("mstep record: exit " << r.code << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.code != 0);  // mpiexec reports the dead rank

  const json j = check_damaged_stats(dir, {"rank-00001.mst"});
  CHECK(j.at("complete") == false);
  REQUIRE(j.at("per_rank").size() == 2);
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    const json& pr = j["per_rank"][rank];
    const std::string status = pr.at("status");
    if (sig == SIGTERM && rank == 1) {
      CHECK(status == "unfinished (no MPI_Finalize)");  // the handler wrote whole frames
    } else {
      CHECK((status == "unfinished (no MPI_Finalize)" || status == "truncated"));
    }
    // Whole ping-pong rounds reached the disk: rank 0 Sends then Recvs, rank 1 the reverse.
    const auto sends = pr.at("calls").value("MPI_Send", 0), recvs = pr.at("calls").value("MPI_Recv", 0);
    CHECK(sends > 100);
    CHECK(recvs > 100);
    CHECK(pr.at("calls").value("MPI_Init", 0) == 1);
    CHECK(pr.at("steps") > 50);  // every round closes a step; closed steps go out with the frames
    CHECK(pr.at("calls").count("MPI_Finalize") == 0);
    CHECK(pr.at("bytes_sent").value("MPI_Send", 0) == 16 * sends);
    CHECK(pr.at("bytes_received").value("MPI_Recv", 0) == 16 * recvs);
  }
  // dump reads the same events (and also reports the problem with exit 1).
  const json d1 = dump_rank(dir, 1, 1);
  CHECK(d1.at("events").size() == j["per_rank"][1].at("events"));
  CHECK(d1.at("events").size() > 200);
}

}  // namespace

TEST_CASE("a rank killed with SIGKILL leaves a readable trace", "[killed]") { killed_run(SIGKILL); }

TEST_CASE("a rank killed with SIGTERM flushes its trace", "[killed]") { killed_run(SIGTERM); }

TEST_CASE("many small frames: exact counts across frame boundaries", "[frames]") {
  const fs::path dir = test_dir() / "trace";
  const int rounds = 5000;  // killed.c: exactly this many ping-pong rounds, no pause
  const Result rec = record(dir, 2, {prog("killed"), "100", "0", std::to_string(rounds)}, {}, {"--buffer", "4k"});
  check_recorded(rec, 2);
  const Stats s = stats(dir);
  check_complete(s, 2);
  for (int rank = 0; rank < 2; ++rank) {
    Expect e;
    e.add("MPI_Init", 1);
    e.add("MPI_Send", rounds, 16 * rounds, 0);
    e.add("MPI_Recv", rounds, 0, 16 * rounds);
    e.add("MPI_Finalize", 1);
    check_rank(s.j, rank, e);
    // 4k buffers hold 73 events: the 10002 calls took more than 100 frames, each flush adding one
    // mstep_flush event of its own.
    const auto events = s.j["per_rank"][rank].at("events").get<std::uint64_t>();
    CHECK(events > 2 * rounds + 2 + 100);
    CHECK(events < 2 * rounds + 2 + 2 * rounds / 50);
  }
  const json d = dump_rank(dir, 1);
  const auto recvs = events_of(d, "MPI_Recv");
  REQUIRE(recvs.size() == static_cast<std::size_t>(rounds));
  for (const auto& r : recvs) {
    CHECK(r.at("peer") == 0);
    CHECK(r.at("tag") == 1);
    CHECK(r.at("recv_bytes") == 16);
  }
}

// Reading must stay linear in the number of frames: when decode_events reserved the exact new
// size for every frame, 120 thousand events in 4k frames took some 20 s instead of a fraction of one.
TEST_CASE("stats reads a trace of many small frames in linear time", "[frames]") {
  const fs::path dir = test_dir() / "trace";
  check_recorded(record(dir, 2, {prog("killed"), "100", "0", "60000"}, {}, {"--buffer", "4k"}), 2);
  const Result r = run({kMstep, "stats", dir.string(), "--format", "json"}, {}, {}, 10);
  CHECK_FALSE(r.timed_out);
  CHECK(r.code == 0);
  CHECK(r.seconds < 5);
}

TEST_CASE("a program that exits without MPI_Finalize leaves a readable, unfinished trace", "[killed]") {
  const fs::path dir = test_dir() / "trace";
  const Result rec = record(dir, 2, {prog("no_finalize")});
  CHECK(rec.code == 0);
  const json j = check_damaged_stats(dir, {"rank-00000.mst", "rank-00001.mst"});
  CHECK(j.at("complete") == false);
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    CHECK(j["per_rank"][rank].at("status") == "unfinished (no MPI_Finalize)");
    Expect e;  // rank 0: 3 x Send(4 int); rank 1: 3 x Recv; both Barrier; no Finalize
    e.add("MPI_Init", 1);
    if (rank == 0) e.add("MPI_Send", 3, 48, 0);
    else e.add("MPI_Recv", 3, 0, 48);
    e.add("MPI_Barrier", 1);
    check_rank(j, rank, e);
  }
  for (const auto& p : j.at("problems")) CHECK(p.get<std::string>().find("did not reach MPI_Finalize") != std::string::npos);
}

// The exit and signal path (emergency_flush) infers the M-steps of the buffered events before it
// writes them: a short run that exits without MPI_Finalize still has its steps.
TEST_CASE("a program that exits without MPI_Finalize keeps its M-steps", "[killed][steps]") {
  const fs::path dir = test_dir() / "trace";
  CHECK(record(dir, 2, {prog("no_finalize")}).code == 0);
  // Closed before the exit (format/step_tracker.hpp): rank 0 {Init, 3 x Send, Barrier}, closed by
  // the Barrier; rank 1 {Init, 3 x Recv}, closed by the Barrier's send side, then {Barrier}.
  const json d0 = dump_rank(dir, 0, 1), d1 = dump_rank(dir, 1, 1);
  REQUIRE(d0.at("steps").size() >= 1);
  CHECK(d0["steps"][0].at("bytes_out") == 48);
  CHECK(d0["steps"][0].at("partners") == std::vector<int>{0, 1});
  REQUIRE(d1.at("steps").size() >= 2);
  CHECK(d1["steps"][0].at("bytes_in") == 48);
  CHECK(d1["steps"][0].at("msgs_in") == 3);
}

// =============================================================================================
// Bad input

namespace {

// A failing mstep command: non-zero (or exactly `code`), nothing on stdout, one line on stderr
// starting with "mstep: ".
void check_one_line_error(const Result& r, int code = -1) {
  if (code >= 0) CHECK(r.code == code);
  else CHECK(r.code != 0);
  CHECK(r.out.empty());
  const auto l = lines_of(r.err);
  REQUIRE(l.size() == 1);
  CHECK(l[0].rfind("mstep: ", 0) == 0);
}

}  // namespace

TEST_CASE("bad command lines and paths fail in one line", "[errors]") {
  const fs::path base = test_dir();
  SECTION("stats of a directory that does not exist") {
    const Result r = run({kMstep, "stats", "/nonexistent"});
    check_one_line_error(r, 1);
    CHECK(r.err.find("/nonexistent") != std::string::npos);
  }
  SECTION("dump of a directory that does not exist") {
    check_one_line_error(run({kMstep, "dump", "/nonexistent", "--format", "json"}), 1);
  }
  SECTION("stats of a directory without a trace") {
    const Result r = run({kMstep, "stats", base.string()});
    check_one_line_error(r, 1);
    CHECK(r.err.find("not an mstep trace directory") != std::string::npos);
  }
  SECTION("stats of a file") {
    std::ofstream(base / "file") << "x";
    check_one_line_error(run({kMstep, "stats", (base / "file").string()}), 1);
  }
  SECTION("an unknown subcommand") { check_one_line_error(run({kMstep, "bogus-subcommand"})); }
  SECTION("no subcommand") { check_one_line_error(run({kMstep})); }
  SECTION("an unknown option") { check_one_line_error(run({kMstep, "stats", "--bogus", base.string()})); }
  SECTION("a bad option value") {
    check_one_line_error(run({kMstep, "stats", base.string(), "--format", "xml"}));
  }
  SECTION("record without a command") {
    const Result r = run({kMstep, "record", "-o", (base / "t").string()}, {}, base);
    check_one_line_error(r, 2);
    CHECK(r.err.find("needs a command") != std::string::npos);
    const Result r2 = run({kMstep, "record", "-o", (base / "t").string(), "--"}, {}, base);
    check_one_line_error(r2, 2);
  }
  SECTION("dump of a rank the run does not have") {
    const fs::path dir = base / "trace";
    check_recorded(record(dir, 2, {prog("p2p"), "1"}), 2);
    const Result r = run({kMstep, "dump", dir.string(), "--rank", "2", "--format", "json"});
    check_one_line_error(r, 1);
    CHECK(r.err.find("no rank 2") != std::string::npos);
  }
  SECTION("record with a --depth out of range") {
    check_one_line_error(run({kMstep, "record", "--depth", "99", "true"}, {}, base));
  }
}

TEST_CASE("damaged traces: each problem in one line, what can be read is printed", "[errors][damaged]") {
  const fs::path base = test_dir();
  const fs::path good = base / "good";
  check_recorded(record(good, 2, {prog("p2p"), "5"}), 2);
  const Stats ref = stats(good);
  check_complete(ref, 2);
  const auto events1 = ref.j["per_rank"][1].at("events").get<std::uint64_t>();
  auto copy = [&](const std::string& name) {
    const fs::path d = base / name;
    fs::copy(good, d, fs::copy_options::recursive);
    return d;
  };

  {
    INFO("a truncated rank file");
    const fs::path d = copy("truncated");
    const fs::path f = d / "rank-00001.mst";
    fs::resize_file(f, fs::file_size(f) - 7);
    const json j = check_damaged_stats(d, {"rank-00001.mst"});
    CHECK(j["per_rank"][1].at("status") == "truncated");
    CHECK(j["per_rank"][0].at("status") == "complete");
    CHECK(j["per_rank"][0].at("calls") == ref.j["per_rank"][0].at("calls"));
    // Only the last frame (the End frame) was cut: every event is still there.
    CHECK(j["per_rank"][1].at("events") == events1);
    CHECK(j.at("problems").size() == 1);
  }
  {
    INFO("a rank file cut inside its event frames");
    const fs::path d = copy("cut");
    const fs::path f = d / "rank-00001.mst";
    fs::resize_file(f, 40);  // header and half a frame header
    const json j = check_damaged_stats(d, {"rank-00001.mst"});
    CHECK(j["per_rank"][1].at("status") == "truncated");
    CHECK(j["per_rank"][1].at("events") == 0);
  }
  {
    INFO("a corrupt byte in the first frame's compressed bytes");
    const fs::path d = copy("corrupt");
    const fs::path f = d / "rank-00000.mst";
    std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
    // File header: magic (8), version (2), body size (2), body; then the first frame's 20-byte
    // header, whose last 4 bytes are its compressed size, and its zstd frame.
    auto u = [&](long at, int bytes) {
      unsigned long v = 0;
      io.seekg(at);
      for (int i = 0; i < bytes; ++i) v |= static_cast<unsigned long>(static_cast<unsigned char>(io.get())) << (8 * i);
      return static_cast<long>(v);
    };
    const long frame = 12 + u(10, 2);
    const long csize = u(frame + 16, 4);
    REQUIRE(csize > 8);
    const long victim = frame + 20 + csize / 2;
    io.seekg(victim);
    const char c = static_cast<char>(io.get());
    io.seekp(victim);
    io.put(static_cast<char>(c ^ 0x5a));
    io.close();
    const json j = check_damaged_stats(d, {"rank-00000.mst"});
    CHECK(j["per_rank"][0].at("status") == "corrupt");
    CHECK(j["per_rank"][0].at("events") == 0);  // nothing after a damaged frame is read
    CHECK(j["per_rank"][1].at("status") == "complete");
  }
  {
    INFO("a missing rank file");
    const fs::path d = copy("missing");
    fs::remove(d / "rank-00001.mst");
    const json j = check_damaged_stats(d, {"rank-00001.mst"});
    CHECK(j.at("ranks") == 2);
    CHECK(j.at("ranks_read") == 1);
  }
  {
    INFO("a missing meta.json");
    const fs::path d = copy("nometa");
    fs::remove(d / "meta.json");
    const json j = check_damaged_stats(d, {"meta.json"});
    CHECK(j.at("ranks") == 2);
    CHECK(j["per_rank"][1].at("calls") == ref.j["per_rank"][1].at("calls"));
  }
  {
    INFO("a rank file that is not a trace");
    const fs::path d = copy("garbage");
    std::ofstream(d / "rank-00000.mst", std::ios::trunc) << "this is not an mstep trace at all, no";
    const json j = check_damaged_stats(d, {"rank-00000.mst"});
    CHECK(j.at("ranks_read") == 1);
  }
}

TEST_CASE("run-time settings: MSTEP_ENABLE=0 and a bad MSTEP_BUFFER record nothing", "[record][settings]") {
  const fs::path base = test_dir();
  SECTION("MSTEP_ENABLE=0: the wrappers pass through") {
    const Result r = record(base / "off", 2, {prog("p2p"), "3"}, {{"MSTEP_ENABLE", "0"}});
    CHECK(r.code == 0);  // p2p checked its own results
    CHECK(r.out.find("iprobe_calls=") != std::string::npos);
    CHECK(r.err.find("mstep: no trace was written") != std::string::npos);
    CHECK_FALSE(fs::exists(base / "off" / "rank-00000.mst"));
  }
  SECTION("a buffer below 4k: one line from rank 0, the run goes on unrecorded") {
    const Result r = record(base / "bad", 2, {prog("p2p"), "3"}, {}, {"--buffer", "1k"});
    CHECK(r.code == 0);
    int lines = 0;
    for (const auto& l : lines_of(r.err))
      if (l.find("MSTEP_BUFFER='1k'") != std::string::npos) {
        ++lines;
        CHECK(l.rfind("mstep: ", 0) == 0);
      }
    CHECK(lines == 1);
    CHECK_FALSE(fs::exists(base / "bad" / "rank-00000.mst"));
  }
  SECTION("a deeper call stack still names the calling line") {
    const fs::path dir = base / "deep";
    check_recorded(record(dir, 2, {prog("p2p"), "3"}, {}, {"--depth", "4"}), 2);
    const Stats s = stats(dir);
    check_complete(s, 2);
    CHECK(s.j["per_rank"][0]["calls"].value("MPI_Send", 0) == 4);
    check_all_callsites_in(dump_rank(dir, 0), "p2p.c");
  }
}

TEST_CASE("record refuses to overwrite a trace unless forced", "[record]") {
  const fs::path dir = test_dir() / "trace";
  check_recorded(record(dir, 2, {prog("p2p"), "1"}), 2);
  const Result again = record(dir, 2, {prog("p2p"), "1"});
  check_one_line_error(again, 2);
  CHECK(again.err.find("already holds a trace") != std::string::npos);
  const Result forced = record(dir, 2, {prog("p2p"), "2"}, {}, {"-f"});
  check_recorded(forced, 2);
  const Stats s = stats(dir);
  check_complete(s, 2);
  CHECK(s.j["per_rank"][0]["calls"].value("MPI_Send", 0) == 3);  // the new run: 2 pings + 1
}

TEST_CASE("record takes the command with or without -- before it", "[record]") {
  const fs::path base = test_dir();
  const Result with = run({kMstep, "record", "-o", (base / "a").string(), "--", "sh", "-c", "exit 5"}, {}, base);
  CHECK(with.code == 5);
  CHECK(with.err.find("no trace was written") != std::string::npos);
  // Without "--", the options after the program's name are the program's, not mstep's.
  const Result without = run({kMstep, "record", "-o", (base / "b").string(), "sh", "-c", "exit 6"}, {}, base);
  CHECK(without.code == 6);
  CHECK(without.err.find("no trace was written") != std::string::npos);
  const fs::path dir = base / "c";
  const Result mpi = run({kMstep, "record", "-o", dir.string(), kMpiexec, "-n", "2", prog("p2p"), "1"}, {}, base);
  check_recorded(mpi, 2);
  check_complete(stats(dir), 2);
}

// Only the "--" that ends record's own options is taken away (CLI11 needs that): the recorded
// program's own "--" reaches it, `mstep record -o DIR sh -c 'echo "$0"' -- x` prints "--".
TEST_CASE("record passes the command's own -- through", "[record]") {
  const fs::path base = test_dir();
  const Result r = run({kMstep, "record", "-o", (base / "t").string(), "sh", "-c", "echo \"$0\"", "--", "x"}, {}, base);
  CHECK(r.code == 0);
  CHECK(r.out == "--\n");
}
