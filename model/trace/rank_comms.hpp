// How the analyses that run the recorder's step tracker once per rank feed it
// (model/analysis/steps_stream, activity, model/export/perfetto); RankComms is format's.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "format/rank_steps.hpp"
#include "format/rank_trace.hpp"
#include "format/step_tracker.hpp"
#include "model/trace/matching.hpp"

namespace mstep {

// Feeds `e` (of communicator `def`) to one rank's tracker of an analysis. A collective in which
// the rank hears every member makes them all partners of its step: the tracker is not given them
// (a world collective would cost ranks squared over all ranks' trackers). Returns whether that was
// so, for an analysis that keeps the member list instead.
inline bool feed_step_tracker(StepTracker& tracker, const Event& e, const CommDef* def) {
  const Role role = op_role(e.op);
  const bool hears_all =
      is_collective_call(e) && def && (role == Role::CollAll || (role == Role::CollRootIn && (e.flags & kRoot)));
  tracker.feed(e, def && !hears_all ? std::span<const std::int32_t>(def->world_ranks) : std::span<const std::int32_t>{});
  return hears_all;
}

}  // namespace mstep
