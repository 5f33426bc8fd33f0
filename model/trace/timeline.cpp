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
  if (init && fin && fin->ns > init->ns)
    c.drift = static_cast<double>(fin->offset_ns - init->offset_ns) / static_cast<double>(fin->ns - init->ns);
  return c;
}

Timeline::Timeline(const std::vector<const RankTrace*>& ranks) {
  clocks_.reserve(ranks.size());
  double zero = std::numeric_limits<double>::infinity();
  for (const RankTrace* t : ranks) {
    clocks_.push_back(t ? rank_clock(*t) : RankClock{});
    if (t && !t->events.empty()) zero = std::min(zero, clocks_.back().global_ns(t->events.front().t_enter));
  }
  zero_ns_ = std::isfinite(zero) ? zero : 0;
}

}  // namespace mstep
