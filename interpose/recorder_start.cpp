// The recorder's setting up at MPI_Init (trace directory, rank files, the writer thread, signal
// handlers) and meta.json. The recording itself is in recorder.cpp.
#include "interpose/recorder.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "interpose/run_info.hpp"

namespace mstep {
namespace {

bool make_dirs(const std::string& path) {
  std::string partial;
  for (std::size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || (path[i] == '/' && i > 0)) {
      partial = path.substr(0, i);
      if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
  }
  return true;
}

// Signals that end a process and leave time to save the trace. SIGKILL leaves none: then every
// frame already written is kept and only the buffer being filled is lost.
constexpr int kFlushSignals[] = {SIGTERM, SIGINT, SIGABRT, SIGHUP, SIGQUIT};
struct sigaction g_previous[std::size(kFlushSignals)];

void on_fatal_signal(int sig) {
  g_recorder.emergency_flush(true);
  for (std::size_t i = 0; i < std::size(kFlushSignals); ++i) {
    if (kFlushSignals[i] != sig) continue;
    sigaction(sig, &g_previous[i], nullptr);  // the application's own handler, or the default
  }
  raise(sig);
}

// The exit flush runs with the flush signals blocked: mpiexec ends the other ranks (SIGTERM) when
// one exits without MPI_Finalize, and a handler that ran in the middle of this flush could only
// give up (one attempt) and let the signal kill the rank with its last buffer half written.
void on_exit() {
  sigset_t block, previous;
  sigemptyset(&block);
  for (int sig : kFlushSignals) sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  g_recorder.emergency_flush(false);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace

void Recorder::start(int thread_level) {
  config_ = read_config();
  if (!config_.enabled) return;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  PMPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (!config_.error.empty()) {
    if (rank_ == 0) std::fprintf(stderr, "mstep: %s; recording off\n", config_.error.c_str());
    return;
  }
  multithreaded_ = thread_level == MPI_THREAD_MULTIPLE;
  PMPI_Comm_dup(MPI_COMM_WORLD, &tool_comm_);
  ticks_per_second_ = measure_tick_rate(2'000'000);
  dir_ = choose_dir(tool_comm_);
  hosts_ = gather_hosts(tool_comm_, rank_, size_);
  on_rank0_host_ = on_rank0_host(tool_comm_, rank_);
  mpi_version_ = mpi_library_version();
  clocks_.push_back(sync_clock_with_rank0(tool_comm_, rank_, size_, ClockSync::AtInit));

  // Every rank must learn whether every other could open its file, or a rank would wait forever
  // in a later clock sync. So agree before recording.
  std::string problem;
  if (!make_dirs(dir_)) problem = fmt::format("cannot create {}: {}", dir_, std::strerror(errno));
  if (problem.empty()) {
    FileHeader h;
    h.rank = rank_;
    h.world_size = size_;
    h.pid = static_cast<std::uint32_t>(::getpid());
    h.clock_kind = static_cast<std::uint8_t>(g_clock_kind);
    h.ticks_per_second = ticks_per_second_;
    try {
      writer_ = std::make_unique<TraceFileWriter>(dir_ + "/" + rank_file_name(rank_), h,
                                                  config_.zstd_level);
    } catch (const TraceError& e) {
      problem = e.what();
    }
  }
  int ok = problem.empty() ? 1 : 0, all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, tool_comm_);
  if (!all_ok) {
    if (!problem.empty()) std::fprintf(stderr, "mstep: rank %d: %s; recording off\n", rank_, problem.c_str());
    writer_.reset();
    return;
  }
  const bool writer_thread = use_writer_thread();
  // Compressing later is worth it where compressing now would run on the application's thread.
  compress_later_ = config_.compress == Config::Compress::Later ||
                    (config_.compress == Config::Compress::Auto && !writer_thread);
  writer_->store_uncompressed(compress_later_);
  // The Init clock sample goes to disk now: a rank killed later (even by SIGKILL) still shares
  // the common timeline with the others.
  scratch_.clear();
  encode_clocks(clocks_, scratch_);
  write_frame(FrameKind::Clock, 0, static_cast<std::uint32_t>(clocks_.size()), false);
  comms_.init(rank_, size_);
  callsites_.init(config_.stack_depth);
  pid_ = static_cast<int>(::getpid());
  // Touch now, inside MPI_Init, the memory the first flush would otherwise fault in while the
  // application runs: the encoding scratch and the compressor, and this thread's event buffer.
  scratch_.assign(config_.buffer_bytes, 0);
  scratch_.clear();
  writer_->prepare(config_.buffer_bytes);
  if (writer_thread) threaded_writer_ = writer_thread_->start([this](Handoff& h) { write_handoff(h, false); });
  new_thread_buffer();
  if (rank_ == 0) write_meta(false);
  std::atexit(on_exit);
  for (std::size_t i = 0; i < std::size(kFlushSignals); ++i) {
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(kFlushSignals[i], &sa, &g_previous[i]);
  }
  // Leave MPI_Init together: the work above is not the same on every rank (rank 0 serves the
  // clock syncs and writes meta.json, each rank faults in its own buffers), and without this the
  // ranks left it up to 6 ms apart on this machine, a skew the application never had and that
  // every model, which starts all ranks at once, would be blamed for (tests/report/imbalance.c:
  // its first step took 9.8 ms instead of 4.3).
  PMPI_Barrier(tool_comm_);
  active_.store(true);
}

bool Recorder::use_writer_thread() {
  if (config_.writer != Config::Writer::Auto) return config_.writer == Config::Writer::Thread;
  // A thread of its own helps only where it gets a core of its own: MPICH's ranks busy-poll, so
  // with as many ranks on the node as this process may use cores, the writer would run only by
  // preempting a rank (measured on 2 cores and 2 ranks: no gain, and waits for the writer).
  MPI_Comm node = MPI_COMM_NULL;
  int node_ranks = 1;
  if (PMPI_Comm_split_type(tool_comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    PMPI_Comm_size(node, &node_ranks);
    PMPI_Comm_free(&node);
  }
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int usable = ::sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  return usable > node_ranks;
}

std::string Recorder::choose_dir(MPI_Comm tool_comm) {
  if (!config_.dir.empty()) return config_.dir;
  // All ranks must write into one directory: rank 0 names it and tells the others.
  char name[512] = {};
  if (rank_ == 0) {
    std::snprintf(name, sizeof name, "mstep.%s.%d", program_name().c_str(), static_cast<int>(::getpid()));
  }
  PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, tool_comm);
  name[sizeof name - 1] = '\0';
  return name;
}

void Recorder::write_meta(bool complete, int write_failed_ranks) {
  RunInfo info;
  info.ranks = size_;
  info.command = command_line();
  info.mpi_library = mpi_version_;
  info.hosts = hosts_;
  info.clock = g_clock_kind == ClockKind::Tsc ? "tsc" : "monotonic";
  info.ticks_per_second = ticks_per_second_;
  info.stack_depth = config_.stack_depth;
  info.complete = complete;
  info.write_failed_ranks = write_failed_ranks;
  info.delay = delay_json_;
  info.collectives = collectives_json_;
  info.writer = threaded_writer_ ? "thread" : "inline";
  info.compress = compress_later_ ? "later" : "now";
  info.environment = mpi_environment();
  const std::string path = dir_ + "/" + kMetaFileName;
  if (!write_run_info(path, info))
    std::fprintf(stderr, "mstep: cannot write %s: %s; the trace is marked incomplete\n", path.c_str(), std::strerror(errno));
}

void Recorder::note_delay(std::string json) {
  delay_json_ = std::move(json);
  if (rank_ == 0) write_meta(false);
}

void Recorder::note_collectives(std::string json) {
  collectives_json_ = std::move(json);
  if (rank_ == 0) write_meta(false);
}

}  // namespace mstep
