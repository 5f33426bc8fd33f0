// Internal to the replay (model/replay/replay.cpp): a rank file as the replay reads it, a window at a
// time (detail::RecordSource, model/replay/replay_plan.hpp).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "format/rank_trace.hpp"
#include "model/replay/replay_plan.hpp"

namespace mstep::model::detail {
namespace {  // internal linkage: see replay_engine.hpp

// A rank file read an Events frame at a time (ReplayInput::files), handed to the replay `step`
// records at a time: the window stays small however large the recorder's frames (linking far
// ahead of the replay only fills the channels).
class FileSource final : public RecordSource {
 public:
  FileSource(const std::string& path, std::uint32_t step, bool read_ahead)
      : reader_(path, std::max<std::uint32_t>(step, 1), read_ahead), step_(std::max<std::uint32_t>(step, 1)) {}
  bool read(BigVector<Event>& out) override {
    if (at_ == rest_.size()) {
      // The reader hands out `step` records at a time (a chunk), except a reader ahead on a thread
      // of its own, whose chunks may be larger: the records are decoded into one buffer of the
      // thread's, and only what is left past a step is kept here. A buffer a rank, kept at its
      // capacity, was a second copy of every window (16 384 ranks: 64 MiB of a 284 MiB report).
      thread_local std::vector<Event> decoded;
      decoded.clear();
      if (!reader_.read(decoded)) return false;
      const std::size_t k = std::min<std::size_t>(step_, decoded.size());
      out.insert(out.end(), decoded.begin(), decoded.begin() + static_cast<std::ptrdiff_t>(k));
      if (k < decoded.size()) {
        rest_.assign(decoded.begin() + static_cast<std::ptrdiff_t>(k), decoded.end());
        at_ = 0;
      }
      return true;
    }
    const std::size_t k = std::min<std::size_t>(step_, rest_.size() - at_);
    out.insert(out.end(), rest_.begin() + static_cast<std::ptrdiff_t>(at_), rest_.begin() + static_cast<std::ptrdiff_t>(at_ + k));
    at_ += k;
    if (at_ == rest_.size()) {
      std::vector<Event>().swap(rest_);
      at_ = 0;
    }
    return true;
  }

 private:
  RankEventReader reader_;
  std::uint32_t step_;
  std::vector<Event> rest_;  // a chunk's records past the step handed out (read ahead only)
  std::size_t at_ = 0;
};

}  // namespace
}  // namespace mstep::model::detail
