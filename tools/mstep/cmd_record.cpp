// mstep record: run a command with libmstep.so preloaded into every rank.
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/trace_format.hpp"
#include "interpose/config.hpp"
#include "model/trace/trace_dir.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/launcher.hpp"
#include "tools/mstep/output.hpp"

namespace mstep::cli {
namespace fs = std::filesystem;

namespace {

struct RecordOptions {
  std::string dir;
  bool force = false;
  int depth = 0;
  std::string buffer;
  std::string writer;
  std::string compress;
  std::vector<std::string> command;
};


std::string default_dir() {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return fmt::format("mstep.{}", stamp);
}

// An existing trace is never overwritten by accident; with --force its files are removed first,
// so that no rank file of an earlier, larger run survives beside the new ones.
bool is_trace_file(const fs::path& p) {
  const auto name = p.filename().string();
  return name == kMetaFileName || is_rank_file_name(name);
}

void prepare_dir(const RecordOptions& o) {
  std::error_code ec;
  if (!fs::exists(o.dir, ec)) return;
  if (!fs::is_directory(o.dir, ec)) fail(2, fmt::format("{} exists and is not a directory", o.dir));
  bool has_trace = false;
  for (const auto& e : fs::directory_iterator(o.dir, ec)) has_trace = has_trace || is_trace_file(e.path());
  if (!has_trace) return;
  if (!o.force) fail(2, fmt::format("{} already holds a trace (use -f to replace it)", o.dir));
  for (const auto& e : fs::directory_iterator(o.dir, ec))
    if (is_trace_file(e.path())) fs::remove(e.path(), ec);
}

// One line on what was recorded. False when the recording itself failed: a rank could not write
// all of its file (disk full, I/O error). A run that ended early (no MPI_Finalize, killed) is not
// a failure of the recording.
bool summarize(const std::string& dir) {
  std::optional<TraceDir> d;
  try {
    // Cheap in the usual case: a complete trace is only counted, not read.
    RunMeta meta = read_run_meta(dir);
    if (meta.present && meta.complete && meta.write_failed_ranks == 0) {
      std::fprintf(stderr, "mstep: trace of %d rank%s in %s (mstep stats %s)\n", meta.ranks,
                   meta.ranks == 1 ? "" : "s", dir.c_str(), dir.c_str());
      return true;
    }
    d = load_trace_dir(dir, std::nullopt, {}, false, /*with_steps=*/false);
  } catch (const TraceError& e) {
    std::fprintf(stderr, "mstep: the trace in %s is unreadable: %s\n", dir.c_str(), e.what());
    return false;
  }
  const TraceCompleteness c = trace_completeness(*d);
  // Every rank finalized but meta.json does not say so: rank 0 could not rewrite it.
  const bool meta_stale = c.damaged_ranks == 0 && c.unfinished_ranks == 0 && !d->meta.complete;
  // A failure of the recording: a rank said its writes failed, rank 0 could not update meta.json,
  // or an incomplete trace on a full file system (then meta.json could not say so). A file cut
  // short because mpiexec killed its rank is not: the command's status tells that story.
  struct statvfs fs_info {};
  const bool disk_full = ::statvfs(dir.c_str(), &fs_info) == 0 && fs_info.f_bavail == 0;
  const bool damaged = d->meta.write_failed_ranks > 0 || meta_stale || (!c.complete && disk_full);
  std::string why = d->problems.empty() ? std::string("no MPI_Finalize") : d->problems.front();
  for (const auto& p : d->problems)
    if (p.find("MPI_Abort") != std::string::npos) why = p;  // the cause of the other ranks' ends
  if (meta_stale) why = fmt::format("{} was not updated at MPI_Finalize", kMetaFileName);
  if (!c.complete && disk_full) why = "its file system is full: the ranks could not write all of their trace";
  std::fprintf(stderr, "mstep: incomplete trace of %zu rank%s in %s: %s (mstep stats %s)\n", d->ranks.size(),
               d->ranks.size() == 1 ? "" : "s", dir.c_str(), why.c_str(), dir.c_str());
  return !damaged;
}

// Whether meta.json says every rank reached MPI_Finalize (rank 0 rewrites it there, complete).
bool finalized(const fs::path& meta) {
  std::ifstream in(meta);
  if (!in) return false;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() && j.value("complete", false);
}

// Waits for the launcher. Once the ranks have written their whole trace (meta.json complete) and
// the job is still running MSTEP_HUNG_AFTER seconds later (default 60), says so once: over UCX's
// TCP transport MPICH can hang in MPI_Finalize after the run (openucx/ucx#8738, seen here), and a
// user should know the trace is whole and that Ctrl-C costs nothing.
// MSTEP_HUNG_AFTER in seconds (default 60); a value that is not a number of seconds is one line
// and exit 2, before anything runs.
double hung_after_setting() {
  const char* v = std::getenv("MSTEP_HUNG_AFTER");
  if (!v) return 60;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(x > 0 && x < 1e9))
    fail(2, fmt::format("MSTEP_HUNG_AFTER='{}' is not a number of seconds above 0", v));
  return x;
}

void wait_noting_a_hang(pid_t child, int& status, const fs::path& meta, double hung_after) {
  using clock = std::chrono::steady_clock;
  std::optional<clock::time_point> whole;
  fs::file_time_type seen{};
  bool noted = false;
  for (;;) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child || (done < 0 && errno != EINTR)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (noted) continue;
    std::error_code ec;
    const auto written = fs::last_write_time(meta, ec);
    if (!ec && written != seen) {
      seen = written;
      if (!whole && finalized(meta)) whole = clock::now();
    }
    if (whole && clock::now() - *whole > std::chrono::duration<double>(hung_after)) {
      std::fprintf(stderr,
                   "mstep: every rank has written its whole trace, but the job has not ended %g s later: it may "
                   "hang in MPI_Finalize (MPICH over UCX's TCP transport does, openucx/ucx#8738); the trace is "
                   "usable, and Ctrl-C ends the job\n",
                   hung_after);
      noted = true;
    }
  }
}

int run(const RecordOptions& o) {
  if (o.command.empty()) fail(2, "record needs a command to run, e.g. mstep record -- mpiexec -n 2 ./app");
  const std::string lib = find_preload_library();
  if (lib.empty()) fail(2, "cannot find libmstep.so next to this mstep (expected in ../lib)");
  const double hung_after = hung_after_setting();
  prepare_dir(o);
  std::string preload = lib;
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  ::setenv("LD_PRELOAD", preload.c_str(), 1);
  ::setenv("MSTEP_DIR", fs::absolute(o.dir).string().c_str(), 1);
  if (o.depth > 0) ::setenv("MSTEP_STACK_DEPTH", std::to_string(o.depth).c_str(), 1);
  if (!o.buffer.empty()) ::setenv("MSTEP_BUFFER", o.buffer.c_str(), 1);
  if (!o.writer.empty()) ::setenv("MSTEP_WRITER", o.writer.c_str(), 1);
  if (!o.compress.empty()) ::setenv("MSTEP_COMPRESS", o.compress.c_str(), 1);

  std::vector<char*> argv;
  for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  if (child < 0) fail(1, fmt::format("cannot fork: {}", std::strerror(errno)));
  if (child == 0) {
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "mstep: cannot run '%s': %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  // The launcher gets the terminal's Ctrl-C itself; mstep waits for it to pass it on, and
  // remembers it: mpiexec.hydra sometimes exits 0 after forwarding a Ctrl-C to its ranks, and an
  // interrupted run must not look like a successful one. A SIGTERM to mstep alone is passed on.
  // Kept to the end: a Ctrl-C while the leftovers are compressed below is noted, not fatal (a
  // rank file is replaced by renaming a whole new one over it).
  LauncherSignals signals(child);
  int status = 0;
  wait_noting_a_hang(child, status, fs::path(o.dir) / kMetaFileName, hung_after);
  signals.launcher_ended();
  const int signalled = LauncherSignals::received();
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code == 0 && signalled != 0) code = 128 + signalled;
  // The command's own failure comes first; a command that succeeded but left no trace (or a
  // damaged one) is a failure of the recording.
  const int failed = code != 0 ? code : 1;
  std::error_code ec;
  fs::remove(fs::path(o.dir) / (std::string(kMetaFileName) + ".tmp"), ec);
  if (!fs::exists(fs::path(o.dir) / kMetaFileName, ec)) {
    // libmstep read the same settings (this process's environment, the options above included):
    // one it turned recording off for is the reason, not the program.
    const Config settings = read_config();
    if (!settings.enabled)
      std::fprintf(stderr, "mstep: no trace was written to %s: MSTEP_ENABLE=%s turns recording off\n", o.dir.c_str(),
                   std::getenv("MSTEP_ENABLE"));
    else if (!settings.error.empty())
      std::fprintf(stderr, "mstep: no trace was written to %s: %s, so libmstep did not record\n", o.dir.c_str(),
                   settings.error.c_str());
    else
      std::fprintf(stderr,
                   "mstep: no trace was written to %s (did the program call MPI_Init, and is it "
                   "linked with MPICH?)\n",
                   o.dir.c_str());
    return failed;
  }
  // Frames left uncompressed by ranks that ended without MPI_Finalize (MSTEP_COMPRESS=later: the
  // others compressed their own there): compressed now that the job is over. A trace that meta.json
  // calls complete has none (every rank compressed its file before rank 0 wrote that), and is not
  // read again: at thousands of ranks that is thousands of files' frame headers after every run.
  bool complete = false;
  try {
    const RunMeta meta = read_run_meta(o.dir);
    complete = meta.present && meta.complete;
  } catch (const TraceError&) {
    // summarize() below says what is wrong with meta.json
  }
  if (!complete) {
    try {
      const CompressSummary s = compress_trace_dir(o.dir, zstd_level_setting(), default_jobs());
      for (const auto& p : s.problems)
        std::fprintf(stderr, "mstep: %s; that rank's frames stay uncompressed (readable as they are)\n", p.c_str());
      if (s.frames > 0) std::fprintf(stderr, "mstep: %s\n", describe(s).c_str());
    } catch (const TraceError& e) {
      std::fprintf(stderr, "mstep: %s\n", e.what());
    }
  }
  return summarize(o.dir) ? code : failed;
}

}  // namespace

std::string find_preload_library() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  const fs::path bin = fs::path(std::string(self, static_cast<std::size_t>(n))).parent_path();
  for (const char* libdir : {"lib", MSTEP_INSTALL_LIBDIR}) {
    const fs::path candidate = bin.parent_path() / libdir / "libmstep.so";
    std::error_code ec;
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return {};
}

void add_record(CLI::App& app) {
  auto o = std::make_shared<RecordOptions>();
  auto* cmd = app.add_subcommand("record", "Run an MPI command with libmstep.so preloaded in every rank");
  cmd->add_option("-o,--output", o->dir, "Trace directory (default: mstep.<date>-<time>)");
  cmd->add_flag("-f,--force", o->force, "Replace a trace already in the directory");
  cmd->add_option("--depth", o->depth, "Call-stack frames kept per call site (MSTEP_STACK_DEPTH)")
      ->check(CLI::Range(1, 32));
  cmd->add_option("--buffer", o->buffer, "Per-thread event buffer, e.g. 1M (MSTEP_BUFFER)");
  cmd->add_option("--writer", o->writer,
                  "Who compresses and writes full buffers: a thread of libmstep's own, the application's "
                  "thread (inline), or auto: a thread where the node has a core to spare (MSTEP_WRITER)")
      ->check(CLI::IsMember({"auto", "thread", "inline"}));
  cmd->add_option("--compress", o->compress,
                  "When frames are compressed: now (as they are written), later (stored during the run, each "
                  "rank compressing its file in MPI_Finalize), or auto: later where they are written on the "
                  "application's thread (MSTEP_COMPRESS)")
      ->check(CLI::IsMember({"auto", "now", "later"}));
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->footer("Example: mstep record -o run1 -- mpiexec -n 4 ./my_app args");
  cmd->callback([o, cmd] {
    o->command = cmd->remaining();
    if (!o->command.empty() && o->command.front() == "--") o->command.erase(o->command.begin());
    if (o->dir.empty()) o->dir = default_dir();
    const int code = run(*o);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace mstep::cli
