#include "model/trace/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/trace/trace_dir.hpp"

namespace mstep {

RankClock rank_clock(const RankTrace& t) {
  RankClock c;
  c.ns_per_tick = seconds_per_tick(t) * 1e9;
  const auto [init, fin] = clock_samples(t);
  const ClockSync* base = init ? init : fin;
  if (!base) {
    c.base_ticks = t.events.empty() ? 0 : t.events.front().t_enter;
    return c;
  }
  c.base_ticks = base->ticks;
  c.base_ns = static_cast<double>(base->ns);
  c.offset_ns = static_cast<double>(base->offset_ns);
  if (init && fin && fin->ns > init->ns) {
    // Drift only where it is measured: the offsets' change beyond their uncertainty (half each
    // sample's round trip), and within what a clock can drift (kMaxClockDrift). Over a short run a
    // sample delayed by preemption made up drifts of 10% and more, which stretched every time of
    // the rank on the timeline against its durations (found by an OTF2 round trip on a loaded
    // machine: 17% longer calls).
    const double change = static_cast<double>(fin->offset_ns - init->offset_ns);
    const double noise = 0.5 * static_cast<double>(init->rtt_ns + fin->rtt_ns);
    const double drift = change / static_cast<double>(fin->ns - init->ns);
    if (std::abs(change) > noise && std::abs(drift) <= kMaxClockDrift) c.drift = drift;
  }
  return c;
}

bool has_clock_samples(const RankTrace& t) {
  const auto [init, fin] = clock_samples(t);
  return init || fin;
}

Timeline::Timeline(const std::vector<const RankTrace*>& ranks) {
  clocks_.reserve(ranks.size());
  // The latest MPI_Init exit of the ranks with clock samples: where the others are placed.
  double init_exit = -std::numeric_limits<double>::infinity();
  for (const RankTrace* t : ranks) {
    clocks_.push_back(t ? rank_clock(*t) : RankClock{});
    if (t && !t->events.empty() && has_clock_samples(*t))
      init_exit = std::max(init_exit, clocks_.back().global_ns(t->events.front().t_exit));
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankTrace* t = ranks[r];
    if (!t || t->events.empty() || has_clock_samples(*t)) continue;
    unplaced_.push_back(static_cast<int>(r));
    // Without any placed rank every rank keeps its own start as zero (ticks from its first event).
    if (!std::isfinite(init_exit)) continue;
    RankClock& c = clocks_[r];
    c.base_ticks = t->events.front().t_exit;
    c.base_ns = init_exit;
  }
  double zero = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < ranks.size(); ++r)
    if (ranks[r] && !ranks[r]->events.empty())
      zero = std::min(zero, clocks_[r].global_ns(ranks[r]->events.front().t_enter));
  zero_ns_ = std::isfinite(zero) ? zero : 0;
}

}  // namespace mstep
