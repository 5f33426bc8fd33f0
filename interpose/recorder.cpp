#include "interpose/recorder.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "interpose/run_info.hpp"

namespace mstep {

Recorder g_recorder;
thread_local ThreadBuffer* Recorder::tls_buffer_ = nullptr;

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

void on_exit() { g_recorder.emergency_flush(false); }

}  // namespace

void Recorder::start(int thread_level, std::uint64_t init_enter) {
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
  // The Init clock sample goes to disk now: a rank killed later (even by SIGKILL) still shares
  // the common timeline with the others.
  scratch_.clear();
  encode_clocks(clocks_, scratch_);
  write_frame(FrameKind::Clock, 0, static_cast<std::uint32_t>(clocks_.size()), false);
  comms_.init(rank_, size_);
  callsites_.init(config_.stack_depth);
  tracker_.emplace(rank_, size_, init_enter);
  if (rank_ == 0) write_meta(false);
  // Touch now, inside MPI_Init, the memory the first flush would otherwise fault in while the
  // application runs: this thread's event buffer, the encoding scratch and the compressor.
  new_thread_buffer();
  scratch_.assign(config_.buffer_bytes, 0);
  scratch_.clear();
  writer_->prepare(config_.buffer_bytes);
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

void Recorder::write_frame(FrameKind kind, std::uint16_t thread, std::uint32_t count, bool from_signal) {
  if (write_failed_.load(std::memory_order_relaxed)) return;
  errno = 0;
  const bool ok = from_signal ? writer_->try_write_frame(kind, thread, count, scratch_)
                              : writer_->write_frame(kind, thread, count, scratch_);
  if (ok) return;
  const int err = errno;
  // try_write_frame also fails when another thread holds the file: not an error of the disk.
  if (from_signal && err == 0) return;
  if (write_failed_.exchange(true)) return;
  // Cut the partial frame off: the file then ends at its last whole frame, as after a clean exit.
  [[maybe_unused]] const int cut = ::truncate(writer_->path().c_str(), static_cast<off_t>(writer_->bytes_written()));
  // snprintf and write(2): this may run in a signal handler.
  char line[768];
  const int n = std::snprintf(line, sizeof line,
                              "mstep: rank %d: cannot write %s: %s; the trace is incomplete from here\n",
                              rank_, writer_->path().c_str(), err ? std::strerror(err) : "compression failed");
  if (n > 0) [[maybe_unused]] auto w = ::write(2, line, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof line - 1));
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

ThreadBuffer& Recorder::new_thread_buffer() {
  auto b = std::make_unique<ThreadBuffer>();
  const std::size_t capacity = std::max<std::size_t>(config_.buffer_bytes / sizeof(Event), 64);
  b->events.resize(capacity);
  std::lock_guard lock(buffers_mutex_);
  b->thread = static_cast<std::uint16_t>(buffers_.size());
  tls_buffer_ = b.get();
  buffers_.push_back(std::move(b));
  return *tls_buffer_;
}

void Recorder::track_steps(const ThreadBuffer& b) {
  for (std::size_t i = 0; i < b.used; ++i) {
    const Event& e = b.events[i];
    tracker_->feed(e, comms_.members(e.comm));
    const auto closed = tracker_->closed();
    if (!closed.empty()) [[unlikely]] {
      for (const auto& step : closed) closed_steps_.add(step);
      tracker_->clear_closed();
    }
  }
}

void Recorder::forget_comm(MPI_Comm c) {
  std::unique_lock lock(mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  comms_.forget(c);
}

std::uint32_t Recorder::add_request(MPI_Request r, bool recv, const CommInfo& comm, MPI_Comm* created) {
  std::unique_lock lock(mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  const std::uint32_t id = next_request_++;
  requests_.add(static_cast<int>(r), RequestInfo{id, recv, &comm, created});
  return id;
}

std::optional<RequestInfo> Recorder::take_request(MPI_Request r) {
  if (r == MPI_REQUEST_NULL) return std::nullopt;
  std::unique_lock lock(mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  return requests_.take(static_cast<int>(r));
}

void Recorder::write_side_frames(std::uint16_t thread, bool from_signal) {
  auto write = [&](FrameKind kind, std::uint32_t count) { write_frame(kind, thread, count, from_signal); };
  if (auto comms = comms_.take_new(); !comms.empty()) {
    scratch_.clear();
    encode_comms(comms, scratch_);
    write(FrameKind::Comms, static_cast<std::uint32_t>(comms.size()));
  }
  if (auto sites = callsites_.take_new(); !sites.empty()) {
    scratch_.clear();
    encode_callsites(sites, scratch_);
    write(FrameKind::Callsites, static_cast<std::uint32_t>(sites.size()));
  }
  if (closed_steps_.size() > 0) {
    scratch_.clear();
    const auto n = static_cast<std::uint32_t>(closed_steps_.size());
    closed_steps_.finish(scratch_);
    write(FrameKind::Steps, n);
  }
}

void Recorder::write_events(ThreadBuffer& b, bool from_signal) {
  if (b.used == 0) return;
  scratch_.clear();
  encode_events(std::span<const Event>(b.events.data(), b.used), scratch_);
  const auto n = static_cast<std::uint32_t>(b.used);
  write_frame(FrameKind::Events, b.thread, n, from_signal);
  b.used = 0;
}

void Recorder::flush(ThreadBuffer& b) {
  const std::uint64_t t0 = now_ticks();
  {
    std::lock_guard lock(mutex_);
    // Definitions first: a reader that stops at a damaged frame still knows every earlier event's
    // communicator and call site.
    track_steps(b);
    write_side_frames(b.thread, false);
    write_events(b, false);
  }
  // The flush is the tool's time, not the application's: it is recorded (before the next call)
  // so that analysis can take it out. Flushes between records of one call merge into one.
  if (b.flush.t_exit == 0) {
    b.flush.op = Op::ToolFlush;
    b.flush.t_enter = t0;
  }
  b.flush.t_exit = now_ticks();
}

void Recorder::record_flush(ThreadBuffer& b) {
  const Event e = b.flush;
  b.flush = Event{};
  b.events[b.used++] = e;
}

void Recorder::stop(const Event& finalize_event) {
  if (!active()) return;
  record(finalize_event);
  clocks_.push_back(sync_clock_with_rank0(tool_comm_, rank_, size_, ClockSync::AtFinalize));
  std::lock_guard lock(mutex_);
  active_.store(false);
  {
    std::lock_guard block(buffers_mutex_);
    for (auto& b : buffers_) track_steps(*b);
    // The run ends with MPI_Finalize: the last step closes there.
    tracker_->finish(finalize_event.t_exit);
    const auto closed = tracker_->closed();
    for (const auto& step : closed) closed_steps_.add(step);
    tracker_->clear_closed();
    for (auto& b : buffers_) {
      write_side_frames(b->thread, false);
      write_events(*b, false);
    }
  }
  write_side_frames(0, false);
  // The Finalize sample only: the Init one is in the file since MPI_Init.
  scratch_.clear();
  encode_clocks(std::span<const ClockSync>(&clocks_.back(), 1), scratch_);
  write_frame(FrameKind::Clock, 0, 1, false);
  scratch_.clear();
  write_frame(FrameKind::End, 0, 0, false);
  writer_.reset();
  finalized_ = true;
  // Every rank's file is closed before rank 0 declares the trace complete, and rank 0 learns
  // how many ranks could not write all of theirs.
  int failed = write_failed_.load() ? 1 : 0, failed_ranks = 0;
  PMPI_Allreduce(&failed, &failed_ranks, 1, MPI_INT, MPI_SUM, tool_comm_);
  if (rank_ == 0) write_meta(failed_ranks == 0, failed_ranks);
  PMPI_Comm_free(&tool_comm_);
}

void Recorder::emergency_flush(bool from_signal) {
  // Only one attempt: a signal arriving during the exit flush must not write frames twice.
  static std::atomic<bool> done{false};
  if (!active() || finalized_ || done.exchange(true)) return;
  active_.store(false);
  std::unique_lock lock(mutex_, std::defer_lock);
  if (from_signal) {
    if (!lock.try_lock()) return;  // the signal came in the middle of a flush: keep what is written
  } else {
    lock.lock();
  }
  // The steps of the buffered events, and the open one up to the last event: a run that ends
  // without MPI_Finalize keeps its M-steps too.
  std::uint64_t last = 0;
  for (auto& b : buffers_) {
    track_steps(*b);
    if (b->used) last = std::max(last, b->events[b->used - 1].t_exit);
  }
  if (last) tracker_->finish(last);
  const auto closed = tracker_->closed();
  for (const auto& step : closed) closed_steps_.add(step);
  tracker_->clear_closed();
  for (auto& b : buffers_) {
    write_side_frames(b->thread, from_signal);
    write_events(*b, from_signal);
  }
  // No clock frame: the Init sample was written at MPI_Init, and there is no Finalize sample.
}

}  // namespace mstep
