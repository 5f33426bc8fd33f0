// The measured time of MPI_Barrier and MPI_Bcast instances, to set beside `mstep advise`'s
// predictions, which assume members that enter together. An instance's span is the time it took
// from the last arrival it needed:
//  - Barrier: the latest exit minus the latest entry (no member can leave before the last one has
//    entered, and every round of any algorithm comes after that);
//  - Bcast: the largest, over the members, of its exit minus the later of its own entry and the
//    root's (a member that enters after its data has arrived is charged only its receive; one
//    whose parent in a tree was late is charged that lateness, which is the tree's).
// Times on the common timeline, so within the clock sync's error (about a microsecond on one node).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "format/trace_format.hpp"

namespace mstep::model {

struct SpanMember {
  double enter_s = 0, exit_s = 0;
  bool root = false;  // Bcast: the root's call
};

// nullopt for another op, no members, or a Bcast without its root's call.
std::optional<double> instance_span(Op op, std::span<const SpanMember> members);

// The spans of one site: their count and mean, and the median of at most kSpanSample of them (all
// of them up to that many; beyond, a uniform sample drawn by a fixed generator, so that the result
// is the same every time and the memory bounded).
class SpanStats {
 public:
  static constexpr std::size_t kSpanSample = 8192;
  void add(double span_s);
  std::uint64_t count() const { return count_; }
  double mean_s() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  double median_s() const;  // 0 without spans
  bool sampled() const { return count_ > kSpanSample; }

 private:
  std::uint64_t count_ = 0;
  double sum_ = 0;
  std::vector<double> sample_;
  std::uint64_t state_ = 0x9e3779b97f4a7c15u;  // xorshift64
};

}  // namespace mstep::model
