#include "model/cost/bspwb_stream.hpp"

#include <algorithm>

namespace mstep::model {

BspwbStream::BspwbStream(const BspParams& params, std::size_t ranks, std::size_t givers)
    : params_(params), ranks_(ranks), givers_(givers) {}

void BspwbStream::step(std::uint32_t s, double w, double h, double extra) {
  while (base_ + pending_.size() <= s) pending_.emplace_back();
  Step& a = pending_[s - base_];
  a.max_w = std::max(a.max_w, w);
  a.max_comm = std::max(a.max_comm, params_.g * h + params_.L + extra);
  a.max_extra = std::max(a.max_extra, extra);
  a.any_traffic = a.any_traffic || h > 0;
  ++a.ranks;
  if (s == base_) flush(false);
}

void BspwbStream::rank_ended(std::uint32_t steps) {
  if (steps <= base_) ++ended_without_base_;
  else ++ended_after_[steps];
  flush(false);
}

double BspwbStream::total() {
  flush(true);
  return T_;
}

void BspwbStream::flush(bool all) {
  while (!pending_.empty()) {
    const Step& a = pending_.front();
    if (!all && a.ranks + ended_without_base_ < givers_) return;
    double max_comm = a.max_comm;
    if (a.ranks < ranks_) max_comm = std::max(max_comm, params_.L);  // ghosts: g*0 + L + 0
    if (!a.any_traffic && !params_.latency_on_empty_steps) max_comm = a.max_extra;
    T_ += a.max_w + max_comm;
    pending_.pop_front();
    ++base_;
    // Ranks that ended after exactly base_ steps have no step base_: ghosts from here on.
    if (const auto it = ended_after_.find(base_); it != ended_after_.end()) {
      ended_without_base_ += it->second;
      ended_after_.erase(it);
    }
  }
}

}  // namespace mstep::model
