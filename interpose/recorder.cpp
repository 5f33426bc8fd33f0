// The recording: thread buffers, their handing over to the writer, frames, MPI_Finalize and the
// exit and signal flushes. Setting up at MPI_Init and meta.json are in recorder_start.cpp.
#include "interpose/recorder.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <sys/types.h>
#include <unistd.h>

#include "format/trace_compact.hpp"
#include "interpose/run_info.hpp"

namespace mstep {

Recorder g_recorder;
thread_local ThreadBuffer* Recorder::tls_buffer_ = nullptr;

namespace {

// try_lock for up to `ms` milliseconds, sleeping with nanosleep (async-signal-safe) in between.
bool lock_within(std::unique_lock<std::mutex>& lock, int ms) {
  for (int i = 0; i < ms; ++i) {
    if (lock.try_lock()) return true;
    const timespec one_ms{0, 1'000'000};
    ::nanosleep(&one_ms, nullptr);
  }
  return lock.try_lock();
}

}  // namespace

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

ThreadBuffer& Recorder::new_thread_buffer() {
  auto b = std::make_unique<ThreadBuffer>();
  // MSTEP_BUFFER is the memory per thread: two halves of it with the writer thread.
  const std::size_t halves = writer_thread_->running() ? 2 : 1;
  b->capacity = std::max<std::size_t>(config_.buffer_bytes / sizeof(Event) / halves, 64);
  b->storage.resize(b->capacity * halves);
  b->fill = b->storage.data();
  std::lock_guard lock(buffers_mutex_);
  b->thread = static_cast<std::uint16_t>(buffers_.size());
  tls_buffer_ = b.get();
  buffers_.push_back(std::move(b));
  return *tls_buffer_;
}

std::vector<CommDef> Recorder::take_comms() {
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  return comms_.take_new();
}

void Recorder::mark_steps(Event* events, std::size_t count) {
  // The run-time M-step decision, and nothing more: the reader derives each step from the records
  // between the marks (trace format 4).
  for (std::size_t i = 0; i < count; ++i)
    if (step_marker_.closes(events[i])) [[unlikely]] events[i].flags |= kClosesStep;
}

void Recorder::write_handoff(Handoff& h, bool from_signal) {
  mark_steps(h.events, h.count);
  // Definitions first: a reader that stops at a damaged frame still knows every earlier event's
  // communicator and call site.
  write_side_frames(h.buffer->thread, from_signal, h.comms);
  write_events(h.events, h.count, h.buffer->thread, from_signal);
}

void Recorder::forget_comm(MPI_Comm c) {
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  comms_.forget(c);
}

std::uint32_t Recorder::add_request(MPI_Request r, bool recv, const CommInfo& comm, MPI_Comm* created,
                                    bool collective, std::int64_t hold_until_ns) {
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  const std::uint32_t id = next_request_++;
  requests_.add(static_cast<int>(r), RequestInfo{id, recv, &comm, created, collective, hold_until_ns});
  return id;
}

void Recorder::add_persistent(MPI_Request r, const PersistentRequest& p) {
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  persistent_.insert(static_cast<int>(r), p);
}

std::optional<PersistentRequest> Recorder::persistent(MPI_Request r) {
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  const PersistentRequest* p = persistent_.find(static_cast<int>(r));
  return p ? std::optional(*p) : std::nullopt;
}

void Recorder::add_message(MPI_Message m, const CommInfo& comm) {
  if (m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC) return;
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  messages_.insert(static_cast<int>(m), &comm);
}

const CommInfo* Recorder::take_message(MPI_Message m) {
  if (m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC) return nullptr;
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  const CommInfo* const* c = messages_.find(static_cast<int>(m));
  if (!c) return nullptr;
  const CommInfo* info = *c;
  messages_.erase(static_cast<int>(m));
  return info;
}

void Recorder::add_window(MPI_Win w, const CommInfo& comm) {
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  windows_.insert(static_cast<int>(w), &comm);
}

const CommInfo* Recorder::window(MPI_Win w) {
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  const CommInfo* const* c = windows_.find(static_cast<int>(w));
  return c ? *c : nullptr;
}

void Recorder::forget_window(MPI_Win w) {
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  windows_.erase(static_cast<int>(w));
}

void Recorder::add_file(MPI_File f, const CommInfo& comm) {
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  files_.insert(reinterpret_cast<std::uintptr_t>(f), &comm);
}

const CommInfo* Recorder::file(MPI_File f) {
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  const CommInfo* const* c = files_.find(reinterpret_cast<std::uintptr_t>(f));
  return c ? *c : nullptr;
}

void Recorder::forget_file(MPI_File f) {
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  files_.erase(reinterpret_cast<std::uintptr_t>(f));
}

void Recorder::free_request(MPI_Request r) {
  if (r == MPI_REQUEST_NULL) return;
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  persistent_.erase(static_cast<int>(r));
  requests_.take(static_cast<int>(r));
}

std::optional<RequestInfo> Recorder::take_request(MPI_Request r) {
  if (r == MPI_REQUEST_NULL) return std::nullopt;
  std::unique_lock lock(tables_mutex_, std::defer_lock);
  if (multithreaded_) lock.lock();
  return requests_.take(static_cast<int>(r));
}

void Recorder::write_side_frames(std::uint16_t thread, bool from_signal, std::span<const CommDef> comms) {
  auto write = [&](FrameKind kind, std::uint32_t count) { write_frame(kind, thread, count, from_signal); };
  if (!comms.empty()) {
    scratch_.clear();
    encode_comms(comms, scratch_);
    write(FrameKind::Comms, static_cast<std::uint32_t>(comms.size()));
  }
  if (auto sites = callsites_.take_new(); !sites.empty()) {
    scratch_.clear();
    encode_callsites(sites, scratch_);
    write(FrameKind::Callsites, static_cast<std::uint32_t>(sites.size()));
  }
}

void Recorder::write_events(const Event* events, std::size_t count, std::uint16_t thread, bool from_signal) {
  if (count == 0) return;
  scratch_.clear();
  encode_events(std::span<const Event>(events, count), scratch_);
  write_frame(FrameKind::Events, thread, static_cast<std::uint32_t>(count), from_signal);
}

void Recorder::flush(ThreadBuffer& b) {
  const std::uint64_t t0 = now_ticks();
  Handoff h{&b, b.half, b.fill, b.used, take_comms()};
  // Emptied before it is handed over: a fatal signal's handler must not write the half both from
  // the writer's queue and as this thread's buffer.
  b.used = 0;
  if (writer_thread_->running()) {
    // Hand this half over and go on with the other, once the writer is done with it (it has had
    // the time the application took to fill this one).
    writer_thread_->submit(std::move(h));
    b.half = 1 - b.half;
    writer_thread_->wait_free(b, b.half);
    b.fill = b.storage.data() + static_cast<std::size_t>(b.half) * b.capacity;
  } else {
    std::lock_guard lock(writer_thread_->write_mutex());
    write_handoff(h, false);
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
  b.fill[b.used++] = e;
}

void Recorder::stop(const Event& finalize_event) {
  if (!active()) return;
  record(finalize_event);
  clocks_.push_back(sync_clock_with_rank0(tool_comm_, rank_, size_, ClockSync::AtFinalize));
  writer_thread_->stop();  // every half handed over is written
  std::lock_guard lock(writer_thread_->write_mutex());
  active_.store(false);
  {
    std::lock_guard block(buffers_mutex_);
    const std::vector<CommDef> comms = take_comms();
    for (auto& b : buffers_) mark_steps(b->fill, b->used);
    std::span<const CommDef> unwritten = comms;
    for (auto& b : buffers_) {
      write_side_frames(b->thread, false, unwritten);
      unwritten = {};
      write_events(b->fill, b->used, b->thread, false);
      b->used = 0;
    }
  }
  write_side_frames(0, false, {});
  // The Finalize sample only: the Init one is in the file since MPI_Init.
  scratch_.clear();
  encode_clocks(std::span<const ClockSync>(&clocks_.back(), 1), scratch_);
  write_frame(FrameKind::Clock, 0, 1, false);
  scratch_.clear();
  write_frame(FrameKind::End, 0, 0, false);
  const std::string path = writer_->path();
  writer_.reset();
  finalized_ = true;
  // Frames stored during the run are compressed now, each rank its own file at once (on a cluster,
  // in parallel on every node), after the Finalize record's times were taken: the run did not pay
  // for it, and `mstep record` finds nothing left to do but the files of ranks that died.
  if (compress_later_ && !write_failed_.load()) {
    try {
      compress_stored_frames(path, config_.zstd_level);
    } catch (const TraceError& e) {
      std::fprintf(stderr, "mstep: rank %d: %s; its frames stay uncompressed (readable as they are)\n", rank_, e.what());
    }
  }
  // Every rank's file is closed before rank 0 declares the trace complete, and rank 0 learns
  // how many ranks could not write all of theirs.
  int failed = write_failed_.load() ? 1 : 0, failed_ranks = 0;
  PMPI_Allreduce(&failed, &failed_ranks, 1, MPI_INT, MPI_SUM, tool_comm_);
  if (rank_ == 0) write_meta(failed_ranks == 0, failed_ranks);
  PMPI_Comm_free(&tool_comm_);
}

void Recorder::emergency_flush(bool from_signal) {
  // Only one attempt: a signal arriving during the exit flush must not write frames twice. A
  // forked child that never exec'd shares the parent's file: it writes nothing.
  static std::atomic<bool> done{false};
  if (!active() || finalized_ || static_cast<int>(::getpid()) != pid_ || done.exchange(true)) return;
  active_.store(false);
  if (!from_signal) writer_thread_->stop();  // what was handed over is written first
  std::unique_lock lock(writer_thread_->write_mutex(), std::defer_lock);
  std::unique_lock tables(tables_mutex_, std::defer_lock);
  if (from_signal) {
    // The writer thread finishes the frame it is writing within milliseconds; if the lock is
    // still held after that, the signal came in the middle of a flush on this very thread: keep
    // what is written.
    if (!lock_within(lock, 200) || (multithreaded_ && !lock_within(tables, 200))) return;
    if (!writer_thread_->drain_from_signal([this](Handoff& h) { write_handoff(h, true); })) return;
  } else {
    lock.lock();
    if (multithreaded_) tables.lock();
  }
  const std::vector<CommDef> comms = comms_.take_new();
  // The buffered events' marks: a run that ends without MPI_Finalize keeps its M-steps too (the
  // reader closes the open one at the last record).
  for (auto& b : buffers_) mark_steps(b->fill, b->used);
  std::span<const CommDef> unwritten = comms;
  for (auto& b : buffers_) {
    write_side_frames(b->thread, from_signal, unwritten);
    unwritten = {};
    write_events(b->fill, b->used, b->thread, from_signal);
    b->used = 0;
  }
  // No clock frame: the Init sample was written at MPI_Init, and there is no Finalize sample.
}

}  // namespace mstep
