// One rank's M-steps derived from its records. A version 4 trace holds only the recorder's
// decision, a mark on each record that closes a step (kClosesStep, StepMarker); the rest of a step
// (its times, sizes and partners) follows from the records, and this runs the recorder's rule over
// them again: StepTracker, fed in file order, a collective given its communicator's members.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "format/rank_trace.hpp"
#include "format/step_tracker.hpp"
#include "format/trace_format.hpp"

namespace mstep {

// A rank's communicators by their local id (the last definition of an id wins). The definitions
// must outlive it.
class RankComms {
 public:
  RankComms() = default;
  explicit RankComms(std::span<const CommDef> comms) {
    for (const CommDef& d : comms) {
      if (d.id >= by_id_.size()) by_id_.resize(d.id + std::size_t{1}, nullptr);
      by_id_[d.id] = &d;
    }
  }
  // The definition of local communicator `id`; null when the trace has none.
  const CommDef* find(std::uint16_t id) const { return id < by_id_.size() ? by_id_[id] : nullptr; }

 private:
  std::vector<const CommDef*> by_id_;
};

class RankStepDeriver {
 public:
  // `comms`: the rank's definitions; they must outlive the deriver.
  RankStepDeriver(std::int32_t rank, std::int32_t world_size, std::span<const CommDef> comms)
      : rank_(rank), world_(world_size), comms_(comms) {}
  // Feeds the next record (the first one starts the rank's first step at its entry); returns the
  // steps it closed, which a version 4 record marks with kClosesStep when there are any.
  std::size_t feed(const Event& e) {
    if (!tracker_) tracker_.emplace(rank_, world_, e.t_enter);
    const std::size_t before = tracker_->closed().size();
    if (StepTracker::needs_members(e)) {
      const CommDef* c = comms_.find(e.comm);
      if (c) tracker_->feed(e, c->world_ranks, c->inter);
      else tracker_->feed(e, {});
    } else {
      tracker_->feed(e, {});
    }
    return tracker_->closed().size() - before;
  }
  // The end of the records (the last record's exit): the open step closes.
  void finish(std::uint64_t end_ticks) {
    if (tracker_) tracker_->finish(end_ticks);
  }
  std::span<const StepRecord> closed() const { return tracker_ ? tracker_->closed() : std::span<const StepRecord>{}; }
  void clear_closed() {
    if (tracker_) tracker_->clear_closed();
  }

 private:
  std::int32_t rank_, world_;
  RankComms comms_;
  std::optional<StepTracker> tracker_;
};

// The M-steps of `t`'s records (version 4 traces, whose records the reader checked against their
// marks): the last closes at the last record's exit.
inline std::vector<StepRecord> rank_steps(const RankTrace& t) {
  std::vector<StepRecord> steps;
  if (t.events.empty()) return steps;
  RankStepDeriver deriver(t.header.rank, t.header.world_size, t.comms);
  for (const Event& e : t.events) {
    deriver.feed(e);
    steps.insert(steps.end(), deriver.closed().begin(), deriver.closed().end());
    deriver.clear_closed();
  }
  deriver.finish(t.events.back().t_exit);
  steps.insert(steps.end(), deriver.closed().begin(), deriver.closed().end());
  return steps;
}

}  // namespace mstep
