// Records produced on a thread of their own, ahead of the reader that takes them: a rank file's
// frames are read, checked, decompressed and decoded (about a sixth of a streamed report's work a
// pass) while the replay or the pass that asked for them works on the records before. For runs of
// few ranks (a thread a reader); see read_ahead_pays().
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "format/trace_format.hpp"

namespace mstep {

// Whether a reader of a rank file of `file_bytes` bytes, in a run of `ranks` ranks, should read
// ahead: a core beside the caller's, few ranks, a file of a megabyte or more (a thread costs tens
// of microseconds: a small file is read before it would have started), and MSTEP_READ_AHEAD not 0
// (to compare both ways in one build).
bool read_ahead_pays(std::size_t ranks, std::uint64_t file_bytes);

class ReadAhead {
 public:
  // `produce` appends the next records to its argument and returns false at the end (with no
  // records then); what it throws is thrown by the take() that reaches it. It runs on the
  // read-ahead thread only, from the first take() on, and not at all once take() returned false
  // or threw: the producer's state is the caller's again then.
  ReadAhead(std::function<bool(std::vector<Event>&)> produce, std::size_t max_records_ahead);
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // Appends the next part, in the producer's order: what one produce() call gave. False at the end.
  bool take(std::vector<Event>& out);

 private:
  struct Part {
    std::vector<Event> records;
    bool more = true;
    std::exception_ptr error;
  };
  void run();

  std::function<bool(std::vector<Event>&)> produce_;
  std::size_t max_ahead_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Part> parts_;
  std::vector<std::vector<Event>> spare_;  // taken parts' buffers, for the producer again
  std::size_t records_ahead_ = 0;
  bool stop_ = false;
  bool producer_waiting_ = false, taker_waiting_ = false;  // who sleeps on changed_
  bool started_ = false, inline_ = false, finished_ = false;  // the taker's own
  std::thread thread_;
};

}  // namespace mstep
