#include "format/read_ahead.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <system_error>

namespace mstep {

bool read_ahead_pays(std::size_t ranks, std::uint64_t file_bytes) {
  const char* setting = std::getenv("MSTEP_READ_AHEAD");
  if (setting && std::string_view(setting) == "0") return false;
  return ranks > 0 && ranks <= 8 && file_bytes >= (std::uint64_t{1} << 20) && std::thread::hardware_concurrency() >= 2;
}

ReadAhead::ReadAhead(std::function<bool(std::vector<Event>&)> produce, std::size_t max_records_ahead)
    : produce_(std::move(produce)), max_ahead_(std::max<std::size_t>(max_records_ahead, 1)) {}

ReadAhead::~ReadAhead() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ReadAhead::run() {
  for (;;) {
    Part part;
    {
      const std::lock_guard lock(mutex_);
      if (!spare_.empty()) {
        part.records = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    try {
      part.more = produce_(part.records);
    } catch (...) {
      part.records.clear();
      part.more = false;
      part.error = std::current_exception();
    }
    const bool last = !part.more;
    std::unique_lock lock(mutex_);
    // Room for it: the reader has taken enough, or nothing is waiting (a part may be larger than
    // the whole allowance). Once full, the producer sleeps until the reader has taken half: a
    // wake-up a part made both threads ping-pong through the kernel (it cost more than it saved).
    if (!parts_.empty() && records_ahead_ + part.records.size() > max_ahead_) {
      producer_waiting_ = true;
      changed_.wait(lock, [&] { return stop_ || parts_.empty() || records_ahead_ <= max_ahead_ / 2; });
      producer_waiting_ = false;
    }
    if (stop_) return;
    records_ahead_ += part.records.size();
    parts_.push_back(std::move(part));
    const bool wake = taker_waiting_;
    lock.unlock();
    if (wake) changed_.notify_all();
    if (last) return;
  }
}

bool ReadAhead::take(std::vector<Event>& out) {
  if (finished_) return false;
  if (!started_) {
    started_ = true;
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {  // no thread to be had: read on the caller's
      inline_ = true;
    }
  }
  if (inline_) {
    const bool more = produce_(out);
    finished_ = !more;
    return more;
  }
  Part part;
  bool wake = false;
  {
    std::unique_lock lock(mutex_);
    if (parts_.empty()) {
      taker_waiting_ = true;
      changed_.wait(lock, [&] { return !parts_.empty(); });
      taker_waiting_ = false;
    }
    part = std::move(parts_.front());
    parts_.pop_front();
    records_ahead_ -= part.records.size();
    wake = producer_waiting_ && (parts_.empty() || records_ahead_ <= max_ahead_ / 2);
  }
  if (wake) changed_.notify_all();
  if (!part.more) {
    // The producer has stopped: its state is the caller's from here on.
    thread_.join();
    finished_ = true;
    if (part.error) std::rethrow_exception(part.error);
    return false;
  }
  if (out.empty()) out.swap(part.records);  // the reader's buffer goes back to the producer
  else out.insert(out.end(), part.records.begin(), part.records.end());
  part.records.clear();
  {
    const std::lock_guard lock(mutex_);
    spare_.push_back(std::move(part.records));
  }
  return true;
}

}  // namespace mstep
