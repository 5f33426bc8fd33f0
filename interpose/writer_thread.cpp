#include "interpose/writer_thread.hpp"

#include <csignal>
#include <ctime>
#include <pthread.h>
#include <unistd.h>

#include "interpose/recorder.hpp"

namespace mstep {

bool WriterThread::start(Process process) {
  if (running()) return true;
  process_ = std::move(process);
  stopping_ = false;
  pid_ = ::getpid();
  // The new thread inherits the signal mask: block everything around its creation.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error&) {
    // No thread (a process limit): the recorder writes inline, as with MSTEP_WRITER=inline.
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return running();
}

void WriterThread::submit(Handoff h) {
  {
    std::lock_guard lock(queue_mutex_);
    h.buffer->in_flight[h.half] = true;
    queue_.push_back(std::move(h));
  }
  work_.notify_one();
}

bool WriterThread::wait_free(const ThreadBuffer& b, int half) {
  std::unique_lock lock(queue_mutex_);
  if (!b.in_flight[half]) return false;
  done_.wait(lock, [&] { return !b.in_flight[half]; });
  return true;
}

void WriterThread::run() {
  for (;;) {
    Handoff* h = nullptr;
    {
      std::unique_lock lock(queue_mutex_);
      work_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;
      h = &queue_.front();  // stays queued until processed: see drain_from_signal
    }
    {
      std::lock_guard write(write_mutex_);
      process_(*h);
    }
    {
      std::lock_guard lock(queue_mutex_);
      h->buffer->in_flight[h->half] = false;
      queue_.pop_front();
    }
    done_.notify_all();
  }
}

void WriterThread::stop() {
  if (!running()) return;
  // A child forked (without exec) by the application has a copy of this object but not the
  // thread: joining it there would wait forever (Recorder also leaves the object undestroyed there).
  if (::getpid() != pid_) return;
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  work_.notify_one();
  thread_.join();
}

bool WriterThread::drain_from_signal(const Process& process) {
  // The writer thread holds the queue's lock only for a push or a pop: wait a little for it.
  bool locked = queue_mutex_.try_lock();
  for (int i = 0; i < 100 && !locked; ++i) {
    const timespec one_ms{0, 1'000'000};
    ::nanosleep(&one_ms, nullptr);
    locked = queue_mutex_.try_lock();
  }
  if (!locked) return false;
  std::lock_guard lock(queue_mutex_, std::adopt_lock);
  // Emptied, not removed: the writer thread may be waiting for write_mutex() with the front one,
  // and if the application's own handler lets the process go on, it finds nothing left to write.
  for (Handoff& h : queue_) {
    process(h);
    h.count = 0;
    h.comms.clear();
  }
  return true;
}

}  // namespace mstep
