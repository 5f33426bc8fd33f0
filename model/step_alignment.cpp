#include "model/step_alignment.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "format/step_tracker.hpp"

namespace mstep::model {
namespace {

void add_partner(StepRecord& step, std::int32_t rank, std::uint32_t sender_step, std::int32_t self) {
  if (rank < 0 || rank == self) return;
  const Partner p{static_cast<std::uint32_t>(rank), sender_step};
  if (std::find(step.incoming.begin(), step.incoming.end(), p) == step.incoming.end()) step.incoming.push_back(p);
}

}  // namespace

AlignedSteps align_steps(std::span<const RankTrace* const> ranks, const Matching& matching, const Timeline& tl) {
  AlignedSteps out;
  const std::size_t n = ranks.size();
  out.input.resize(n);
  out.steps.resize(n);
  out.actual_end_s.resize(n);
  out.event_step.resize(n);
  out.rank_actual_s.assign(n, 0.0);

  // Zero: the earliest exit from MPI_Init (ranks leave it together: it ends in an allreduce).
  double zero = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < n; ++r) {
    if (!ranks[r] || ranks[r]->events.empty()) continue;
    const Event& first = ranks[r]->events.front();
    zero = std::min(zero, tl.seconds(static_cast<int>(r), first.t_exit));
  }
  out.zero_s = std::isfinite(zero) ? zero : 0.0;

  for (std::size_t r = 0; r < n; ++r) {
    if (!ranks[r] || ranks[r]->events.empty()) continue;
    const RankTrace& t = *ranks[r];
    std::map<std::uint16_t, std::vector<std::int32_t>> members;
    for (const auto& c : t.comms) members[c.id] = c.world_ranks;
    StepTracker tracker(static_cast<std::int32_t>(r), static_cast<std::int32_t>(n), t.events.front().t_enter);
    auto& steps = out.steps[r];
    auto& event_step = out.event_step[r];
    event_step.resize(t.events.size());
    for (std::size_t i = 0; i < t.events.size(); ++i) {
      const Event& e = t.events[i];
      const auto it = members.find(e.comm);
      tracker.feed(e, it != members.end() ? std::span<const std::int32_t>(it->second) : std::span<const std::int32_t>{});
      // A collective closes the step it belongs to: it is in the one before the open step.
      const std::uint32_t index = tracker.current_index() - (is_collective_call(e) ? 1 : 0);
      event_step[i] = index - 1;
      for (const auto& s : tracker.closed()) steps.push_back(s);
      tracker.clear_closed();
    }
    const Event& last = t.events.back();
    tracker.finish(last.t_exit);
    for (const auto& s : tracker.closed()) steps.push_back(s);
    tracker.clear_closed();

    auto& input = out.input[r];
    input.resize(steps.size());
    out.actual_end_s[r].resize(steps.size());
    for (std::size_t s = 0; s < steps.size(); ++s) {
      input[s].w = tl.duration(static_cast<int>(r), steps[s].compute);
      input[s].in_bytes = steps[s].bytes_in;
      input[s].out_bytes = steps[s].bytes_out;
      out.actual_end_s[r][s] = tl.seconds(static_cast<int>(r), steps[s].end) - out.zero_s;
    }
    // The run ends where MPI_Finalize begins (or with the last record of an unfinished trace).
    std::uint64_t end = last.t_exit;
    for (auto it = t.events.rbegin(); it != t.events.rend(); ++it)
      if (it->op == Op::Finalize) {
        end = it->t_enter;
        break;
      }
    out.rank_actual_s[r] = tl.seconds(static_cast<int>(r), end) - out.zero_s;
    out.actual_s = std::max(out.actual_s, out.rank_actual_s[r]);
  }

  auto step_of = [&](std::int32_t rank, std::uint32_t event) -> std::uint32_t {
    const auto& es = out.event_step[static_cast<std::size_t>(rank)];
    return event < es.size() ? es[event] : kSameStep;
  };
  auto in_range = [&](std::int32_t rank, std::uint32_t step) {
    return step < out.input[static_cast<std::size_t>(rank)].size();
  };

  // Point-to-point: the receiving step gets the sender's sending step as a partner.
  for (const Message& m : matching.messages) {
    const std::uint32_t rs = step_of(m.dst, m.recv_event), ss = step_of(m.src, m.send_event);
    if (!in_range(m.dst, rs) || !in_range(m.src, ss)) continue;
    add_partner(out.input[static_cast<std::size_t>(m.dst)][rs], m.src, ss, m.dst);
  }

  // Collectives: who hears from whom in one instance, each at the step it made the call in.
  struct Member {
    std::int32_t rank;
    std::uint32_t step;
    bool root;
    Role role;
  };
  std::vector<Member> members;
  for (const auto& calls : collective_instances(ranks)) {
    members.clear();
    for (const auto& c : calls) {
      const Event& e = ranks[static_cast<std::size_t>(c.rank)]->events[c.event];
      members.push_back({c.rank, out.event_step[static_cast<std::size_t>(c.rank)][c.event], (e.flags & kRoot) != 0,
                         op_role(e.op)});
    }
    for (const Member& to : members) {
      if (!in_range(to.rank, to.step)) continue;
      StepRecord& step = out.input[static_cast<std::size_t>(to.rank)][to.step];
      for (const Member& from : members) {
        if (!in_range(from.rank, from.step)) continue;
        // Who hears from whom: everybody in CollAll; the root's data in CollRootOut; the root
        // hears everybody in CollRootIn.
        const bool hears = to.role == Role::CollAll || (to.role == Role::CollRootOut && from.root && !to.root) ||
                           (to.role == Role::CollRootIn && to.root);
        if (hears) add_partner(step, from.rank, from.step, to.rank);
      }
    }
  }
  return out;
}

}  // namespace mstep::model
