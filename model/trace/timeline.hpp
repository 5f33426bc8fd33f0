// All ranks on one timeline. Each rank's ticks become its CLOCK_MONOTONIC nanoseconds through its
// (ticks, ns) clock samples, then rank 0's clock through the offsets measured by ping-pong at
// MPI_Init and MPI_Finalize, interpolated linearly in between (drift correction).
#pragma once

#include <cstdint>
#include <vector>

#include "format/rank_trace.hpp"

namespace mstep {

// The most two clocks drift apart that the timeline believes: 500 ppm, NTP's largest slew rate;
// quartz drifts by tens of ppm. A larger measured drift is sampling noise and is not applied.
inline constexpr double kMaxClockDrift = 5e-4;

struct RankClock {
  std::uint64_t base_ticks = 0;  // a tick count with a known local time
  double base_ns = 0;            // local CLOCK_MONOTONIC ns at base_ticks
  double ns_per_tick = 1;
  double offset_ns = 0;          // rank 0's clock minus this one's, at base_ns
  double drift = 0;              // change of that offset per local ns (0 with one sample)

  double local_ns(std::uint64_t ticks) const {
    return base_ns + static_cast<double>(static_cast<std::int64_t>(ticks - base_ticks)) * ns_per_tick;
  }
  // Rank 0's CLOCK_MONOTONIC nanoseconds at this rank's `ticks`.
  double global_ns(std::uint64_t ticks) const {
    const double l = local_ns(ticks);
    return l + offset_ns + drift * (l - base_ns);
  }
};

// The clock of one rank from its samples; without any (a trace cut before its first frame of
// clock samples) the ticks are taken as nanoseconds-from-start at the header's rate.
RankClock rank_clock(const RankTrace& t);

// True when the rank has a clock sample (at MPI_Init or MPI_Finalize) tying it to rank 0's clock.
bool has_clock_samples(const RankTrace& t);

class Timeline {
 public:
  // `ranks[i]` may be null (unreadable rank): its clock is then the identity. A rank without
  // clock samples is placed by the others: its MPI_Init exit is put at the latest MPI_Init exit
  // of the ranks that have samples (the recorder's collective clock sync inside MPI_Init lets
  // them all leave it together), and it is listed in unplaced().
  explicit Timeline(const std::vector<const RankTrace*>& ranks);
  // Seconds since the earliest first event of any rank, on rank 0's clock.
  double seconds(int rank, std::uint64_t ticks) const {
    return (clocks_[static_cast<std::size_t>(rank)].global_ns(ticks) - zero_ns_) * 1e-9;
  }
  // A duration on one rank, in seconds (no offset involved).
  double duration(int rank, std::uint64_t ticks) const {
    return static_cast<double>(ticks) * clocks_[static_cast<std::size_t>(rank)].ns_per_tick * 1e-9;
  }
  const RankClock& clock(int rank) const { return clocks_[static_cast<std::size_t>(rank)]; }
  std::size_t ranks() const { return clocks_.size(); }
  // Ranks with events but no clock samples, in rank order: their times are approximate.
  const std::vector<int>& unplaced() const { return unplaced_; }

 private:
  std::vector<RankClock> clocks_;
  std::vector<int> unplaced_;
  double zero_ns_ = 0;
};

}  // namespace mstep
