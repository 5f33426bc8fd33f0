// The recorder's own thread, which turns full event buffers into trace frames (M-step tracking,
// encoding, zstd, write) so that the application's thread only hands a buffer over and goes on
// with the other half of its double buffer. The application blocks only when it has filled that
// other half too before the writer was done with it (the recorder then records how long).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "format/trace_format.hpp"

namespace mstep {

struct ThreadBuffer;

// One full half of a thread's buffer, and the communicators first used in it (taken on the
// application's thread, which owns the communicator table).
struct Handoff {
  ThreadBuffer* buffer = nullptr;
  int half = 0;
  Event* events = nullptr;  // the writer marks the records that close M-steps
  std::size_t count = 0;
  std::vector<CommDef> comms;
};

class WriterThread {
 public:
  using Process = std::function<void(Handoff&)>;
  WriterThread() = default;
  WriterThread(const WriterThread&) = delete;
  WriterThread& operator=(const WriterThread&) = delete;
  ~WriterThread() { stop(); }

  // Starts the thread (with every signal blocked, so that a fatal signal's handler runs on an
  // application thread). `process` runs on it, one handoff at a time, in the order submitted.
  // False if no thread could be made: the caller then writes inline.
  bool start(Process process);
  bool running() const { return thread_.joinable(); }
  // The application's thread: queue `h`; its half stays busy until processed.
  void submit(Handoff h);
  // Blocks until the writer is done with `half` of `b`. True if it had to wait.
  bool wait_free(const ThreadBuffer& b, int half);
  // Processes what is queued, then ends the thread. Idempotent.
  void stop();
  // From a fatal signal's handler, which holds write_mutex(): if the queue is free, runs `process`
  // here on every handoff still queued (none has been started: the writer thread takes
  // write_mutex() before it processes one, and dequeues it only after) and returns true; false
  // if the queue's lock is held (what it holds is lost).
  bool drain_from_signal(const Process& process);

  // Held while a handoff is processed, and by whoever else touches the writer's state (the trace
  // file, the step tracker): the application's thread at MPI_Finalize and exit, or inline.
  std::mutex& write_mutex() { return write_mutex_; }

 private:
  void run();

  Process process_;
  std::mutex queue_mutex_;
  std::condition_variable work_;   // to the thread: something queued, or stop
  std::condition_variable done_;   // to the application: a half became free
  std::deque<Handoff> queue_;      // front: being processed or next
  bool stopping_ = false;
  std::mutex write_mutex_;
  std::thread thread_;
  int pid_ = 0;  // the process that started the thread
};

}  // namespace mstep
