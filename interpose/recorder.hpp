// The recorder: what the wrappers hand their events to. It keeps one fixed-size event buffer per
// thread, feeds the M-step tracker, and turns full buffers into trace frames. Memory does not grow
// with the length of the run: only with the number of distinct call sites and communicators.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>
#include <unistd.h>

#include "format/step_tracker.hpp"
#include "format/trace_file.hpp"
#include "interpose/callsite.hpp"
#include "interpose/clock.hpp"
#include "interpose/comm_table.hpp"
#include "interpose/config.hpp"
#include "format/flat_map.hpp"
#include "interpose/request_table.hpp"
#include "interpose/writer_thread.hpp"

namespace mstep {

// A thread's events: a double buffer of two halves, one filled by the thread while the writer
// thread writes the other (one buffer of twice the size when frames are written inline).
struct ThreadBuffer {
  std::vector<Event> storage;  // fixed size, never reallocated
  std::size_t capacity = 0;    // events per half
  Event* fill = nullptr;       // the half being filled
  std::size_t used = 0;
  int half = 0;
  bool in_flight[2] = {false, false};  // handed to the writer thread; guarded by its queue lock
  std::uint16_t thread = 0;
  Event flush;                 // the last flush, not yet in the buffer (t_exit 0: none)
};

class Recorder {
 public:
  Recorder() = default;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  // In a child the application forked (and that exits without exec), the writer thread does not
  // exist, and destroying its condition variables would wait forever for the parent's waiter: the
  // child leaves them be (it is exiting).
  ~Recorder() {
    if (writer_thread_ && writer_thread_->running() && pid_ != 0 && static_cast<int>(::getpid()) != pid_)
      (void)writer_thread_.release();
  }

  // True between a successful start() and stop(): wrappers record only then.
  bool active() const { return active_.load(std::memory_order_relaxed); }

  // After PMPI_Init/PMPI_Init_thread succeeded.
  void start(int thread_level);
  // At MPI_Finalize, before PMPI_Finalize: last clock sync, flushes, End frame, metadata.
  void stop(const Event& finalize_event);
  // Flushes what it can when the process ends without MPI_Finalize (exit, signal).
  void emergency_flush(bool from_signal);

  // The hot path: one copy into this thread's buffer. Everything else (M-steps, encoding,
  // compression, writing) happens when half the buffer is full, on the writer thread.
  void record(const Event& e) {
    ThreadBuffer& b = buffer();
    // A flush's own record goes in before the next call, never between two records of one call.
    if (b.flush.t_exit != 0 && !e.continuation()) [[unlikely]] record_flush(b);
    b.fill[b.used++] = e;
    if (b.used == b.capacity) [[unlikely]] flush(b);
  }
  std::uint32_t callsite(void* ret) { return callsites_.lookup(ret); }
  bool multithreaded() const { return multithreaded_; }
  const CommInfo& comm(MPI_Comm c) {
    if (c == MPI_COMM_WORLD) return comms_.get(c);
    std::unique_lock lock(tables_mutex_, std::defer_lock);
    if (multithreaded_) lock.lock();
    return comms_.get(c);
  }
  // After a wrapped communicator creator: registers `c` afresh (CommTable::add).
  const CommInfo& new_comm(MPI_Comm c) {
    std::unique_lock lock(tables_mutex_, std::defer_lock);
    if (multithreaded_) lock.lock();
    return comms_.add(c);
  }
  void forget_comm(MPI_Comm c);
  // MPI_Comm_idup: its communicator, registered at the call (CommTable::add_copy) ...
  const CommInfo& new_dup(const CommInfo& parent) {
    std::unique_lock lock(tables_mutex_, std::defer_lock);
    if (multithreaded_) lock.lock();
    return comms_.add_copy(parent);
  }
  // ... and its handle, once the request completed.
  void bind_comm(MPI_Comm c, const CommInfo& info) {
    std::unique_lock lock(tables_mutex_, std::defer_lock);
    if (multithreaded_) lock.lock();
    comms_.bind(c, info);
  }

  // `created`: MPI_Comm_idup's output handle, bound to `comm` when the request completes.
  std::uint32_t add_request(MPI_Request r, bool recv, const CommInfo& comm, MPI_Comm* created = nullptr,
                            bool collective = false, std::int64_t hold_until_ns = INT64_MIN);
  // Called once MPI has completed the request behind handle r: the oldest request mstep saw
  // behind that handle, removed; nullopt if none (null, inactive persistent, foreign requests).
  std::optional<RequestInfo> take_request(MPI_Request r);
  // Persistent requests by handle, from MPI_*_init to MPI_Request_free.
  void add_persistent(MPI_Request r, const PersistentRequest& p);
  std::optional<PersistentRequest> persistent(MPI_Request r);
  // MPI_Request_free: forgets the handle's persistent request and its oldest pending one, so that
  // MPI's reuse of the handle ties nothing later to them.
  void free_request(MPI_Request r);
  // Matched probes: the communicator of a message handle, from its Mprobe/Improbe to its receive.
  void add_message(MPI_Message m, const CommInfo& comm);
  const CommInfo* take_message(MPI_Message m);
  // RMA windows and MPI-IO files, from their creation to their free/close: the communicator they
  // were made over (nullptr: one mstep did not see made).
  void add_window(MPI_Win w, const CommInfo& comm);
  const CommInfo* window(MPI_Win w);
  void forget_window(MPI_Win w);
  void add_file(MPI_File f, const CommInfo& comm);
  const CommInfo* file(MPI_File f);
  void forget_file(MPI_File f);

  int rank() const { return rank_; }
  // Whether this rank runs on rank 0's host (the same processor name).
  bool shares_rank0_host() const { return on_rank0_host_; }
  // Rank 0's clock minus this rank's, for the delay apparatus: 0 on rank 0's host, which shares
  // its CLOCK_MONOTONIC (the offset measured there is noise of up to half the best of the sync's
  // round trips: tens of microseconds with another job on the cores, which shortened or erased
  // the delays), else as measured at MPI_Init (0 before start()).
  std::int64_t rank0_clock_offset_ns() const {
    return clocks_.empty() || on_rank0_host_ ? 0 : clocks_.front().offset_ns;
  }
  // The delay apparatus's settings for meta.json ("delay"); rewrites it on rank 0.
  void note_delay(std::string json);
  // The substitute collectives that run (interpose/substitute.hpp) for meta.json ("collectives").
  void note_collectives(std::string json);

 private:
  ThreadBuffer& buffer() {
    if (!tls_buffer_) [[unlikely]] return new_thread_buffer();
    return *tls_buffer_;
  }
  ThreadBuffer& new_thread_buffer();
  // The communicators registered since the last call (the application's side of the table).
  std::vector<CommDef> take_comms();
  // The writer's side, under writer_thread_->write_mutex(): a handed-over half becomes frames.
  void write_handoff(Handoff& h, bool from_signal);
  void mark_steps(Event* events, std::size_t count);
  void flush(ThreadBuffer& b);
  void record_flush(ThreadBuffer& b);
  // Writes `comms`, new call sites and closed steps. Caller holds the write mutex.
  void write_side_frames(std::uint16_t thread, bool from_signal, std::span<const CommDef> comms);
  void write_events(const Event* events, std::size_t count, std::uint16_t thread, bool from_signal);
  // Every frame goes through here. After the first failed write (disk full, quota, I/O error) the
  // rank says so once on its stderr and writes nothing more: a file that ends at its last whole
  // frame stays readable, and the trace is marked incomplete at MPI_Finalize.
  void write_frame(FrameKind kind, std::uint16_t thread, std::uint32_t count, bool from_signal);
  std::string choose_dir(MPI_Comm tool_comm);
  // MSTEP_WRITER, or for auto whether this process has a core to spare (collective on tool_comm_).
  bool use_writer_thread();
  void write_meta(bool complete, int write_failed_ranks = 0);

  std::atomic<bool> active_{false};
  bool multithreaded_ = false;
  bool finalized_ = false;
  bool threaded_writer_ = false;  // frames written by writer_thread_ (meta.json "writer")
  bool compress_later_ = false;   // frames stored uncompressed (meta.json "compress": "later")
  int pid_ = 0;  // the process that records (a forked child does not flush at exit)
  std::atomic<bool> write_failed_{false};
  Config config_;
  int rank_ = 0;
  int size_ = 1;
  std::string dir_;
  MPI_Comm tool_comm_ = MPI_COMM_NULL;  // a private duplicate of MPI_COMM_WORLD for mstep's own messages
  // The application's side: under tables_mutex_ when MPI_THREAD_MULTIPLE.
  CallsiteRegistry callsites_;  // (its own lock)
  CommTable comms_;
  RequestTable requests_;
  FlatHandleMap<PersistentRequest> persistent_{0};
  FlatHandleMap<const CommInfo*> messages_{0};
  FlatHandleMap<const CommInfo*> windows_{0};
  FlatMap<std::uintptr_t, const CommInfo*> files_{0};  // MPICH's MPI_File is a pointer
  std::uint32_t next_request_ = 1;
  std::mutex tables_mutex_;
  std::mutex buffers_mutex_;          // the list of thread buffers
  std::vector<std::unique_ptr<ThreadBuffer>> buffers_;
  // The writer's side: under writer_thread_->write_mutex().
  std::unique_ptr<TraceFileWriter> writer_;
  StepMarker step_marker_;  // fed every record in the order they are written
  std::vector<std::uint8_t> scratch_;
  std::vector<ClockSync> clocks_;
  double ticks_per_second_ = 1e9;
  std::vector<std::string> hosts_;
  bool on_rank0_host_ = true;
  std::string mpi_version_;
  std::string delay_json_;
  std::string collectives_json_;
  // Last: destroyed first, so that its thread is joined before what it writes with goes away. On
  // the heap so that a forked child can leave it alone (see ~Recorder).
  std::unique_ptr<WriterThread> writer_thread_ = std::make_unique<WriterThread>();

  static thread_local ThreadBuffer* tls_buffer_;
};

extern Recorder g_recorder;

}  // namespace mstep
