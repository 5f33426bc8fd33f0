// A rank's communicators by their local id, and how the analyses that run the recorder's step
// tracker once per rank feed it (model/analysis/steps_stream, activity, model/export/perfetto).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "format/rank_trace.hpp"
#include "format/step_tracker.hpp"
#include "model/trace/matching.hpp"

namespace mstep {

class RankComms {
 public:
  RankComms() = default;
  explicit RankComms(const RankTrace& t) {
    for (const CommDef& d : t.comms) {
      if (d.id >= by_id_.size()) by_id_.resize(d.id + 1u, nullptr);
      by_id_[d.id] = &d;
    }
  }
  // The definition of local communicator `id`; null when the trace has none.
  const CommDef* find(std::uint16_t id) const { return id < by_id_.size() ? by_id_[id] : nullptr; }

 private:
  std::vector<const CommDef*> by_id_;
};

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
