#include "model/trace/step_alignment.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "format/step_tracker.hpp"

namespace mstep::model {
namespace {

// Adds sender step (rank, sender_step) to `step`'s partners with the send point `w_send` of one
// of its messages. Duplicates are merged once all are in (merge_partners).
void add_partner(StepRecord& step, std::int32_t rank, std::uint32_t sender_step, std::int32_t self, double w_send) {
  if (rank < 0 || rank == self) return;
  step.incoming.push_back(Partner{static_cast<std::uint32_t>(rank), sender_step, w_send});
}

// Several messages of one partner step are one partner with the latest send point (the
// receiving step needs them all). Sorting, not a search per message: a step may hear from
// thousands of ranks.
void merge_partners(StepRecord& step) {
  auto& in = step.incoming;
  std::sort(in.begin(), in.end(), [](const Partner& a, const Partner& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.step < b.step;
  });
  std::size_t k = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (k > 0 && in[k - 1] == in[i]) in[k - 1].w_send = std::max(in[k - 1].w_send, in[i].w_send);
    else in[k++] = in[i];
  }
  in.resize(k);
}

// Per event of one rank: the ticks of computation in the event's step before the event began,
// accounted as StepTracker does (the gap before each call that is not a continuation record is
// computation; a step's computation is a contiguous stretch of the rank's, so the step's part
// is the rank's total so far minus that of the steps before it).
std::vector<std::uint64_t> compute_before(const RankTrace& t, std::span<const mstep::StepRecord> steps,
                                          std::span<const std::uint32_t> event_step) {
  std::vector<std::uint64_t> step_begin(steps.size() + 1, 0);  // computation before step s
  for (std::size_t s = 0; s < steps.size(); ++s) step_begin[s + 1] = step_begin[s] + steps[s].compute;
  std::vector<std::uint64_t> out(t.events.size(), 0);
  std::uint64_t last_exit = t.events.empty() ? 0 : t.events.front().t_enter, total = 0;
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    if (!e.continuation()) {
      if (e.t_enter > last_exit) total += e.t_enter - last_exit;
      last_exit = std::max(last_exit, e.t_exit);
    }
    const std::uint32_t s = event_step[i];
    if (s >= steps.size()) continue;
    // Clamped: interleaved threads can make the two accounts disagree a little.
    out[i] = std::min(total - std::min(total, step_begin[s]), steps[s].compute);
  }
  return out;
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

  // Per rank and event: seconds of computation in the event's step before it (a send's send point).
  std::vector<std::vector<double>> send_point(n);
  for (std::size_t r = 0; r < n; ++r) {
    if (!ranks[r] || ranks[r]->events.empty()) continue;
    const RankTrace& t = *ranks[r];
    std::map<std::uint16_t, const CommDef*> members;
    for (const auto& c : t.comms) members[c.id] = &c;
    StepTracker tracker(static_cast<std::int32_t>(r), static_cast<std::int32_t>(n), t.events.front().t_enter);
    auto& steps = out.steps[r];
    auto& event_step = out.event_step[r];
    event_step.resize(t.events.size());
    for (std::size_t i = 0; i < t.events.size(); ++i) {
      const Event& e = t.events[i];
      const auto it = members.find(e.comm);
      if (it != members.end()) tracker.feed(e, it->second->world_ranks, it->second->inter);
      else tracker.feed(e, {});
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
    const std::vector<std::uint64_t> before = compute_before(t, steps, event_step);
    auto& send_w = send_point[r];
    send_w.resize(t.events.size());
    for (std::size_t i = 0; i < t.events.size(); ++i) send_w[i] = tl.duration(static_cast<int>(r), before[i]);
    for (std::size_t s = 0; s < steps.size(); ++s) {
      input[s].w = tl.duration(static_cast<int>(r), steps[s].compute);
      input[s].w_send = input[s].w;  // lowered to the first send's point below; all of w without sends
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

  // A message of `rank`'s step `step` left at send point `w`: the step's first send is its
  // earliest.
  auto sent = [&](std::int32_t rank, std::uint32_t step, double w) {
    double& first = out.input[static_cast<std::size_t>(rank)][step].w_send;
    if (w >= 0) first = std::min(first, w);
  };
  auto point_of = [&](std::int32_t rank, std::uint32_t event) {
    const auto& p = send_point[static_cast<std::size_t>(rank)];
    return event < p.size() ? p[event] : -1.0;
  };

  // Point-to-point: the receiving step gets the sender's sending step as a partner, with the
  // computation of that step before the send record (an Isend's start, not its completion).
  for (const Message& m : matching.messages) {
    const std::uint32_t rs = step_of(m.dst, m.recv_event), ss = step_of(m.src, m.send_event);
    if (!in_range(m.dst, rs) || !in_range(m.src, ss)) continue;
    const double w = point_of(m.src, m.send_event);
    add_partner(out.input[static_cast<std::size_t>(m.dst)][rs], m.src, ss, m.dst, w);
    sent(m.src, ss, w);
  }

  // Collectives: who hears from whom in one instance, each at the step it made the call in.
  struct Member {
    std::int32_t rank;
    std::uint32_t step;
    bool root;
    Role role;
    double w_send;  // the collective closes its step, so this is all of the step's computation
  };
  std::vector<Member> members;
  for (const auto& calls : collective_instances(ranks)) {
    members.clear();
    for (const auto& c : calls) {
      const Event& e = ranks[static_cast<std::size_t>(c.rank)]->events[c.event];
      members.push_back({c.rank, out.event_step[static_cast<std::size_t>(c.rank)][c.event], (e.flags & kRoot) != 0,
                         op_role(e.op), point_of(c.rank, c.event)});
    }
    // Everybody hears everybody (Barrier, All*): one partner group for all members, not n^2 partners.
    if (!members.empty() && members.front().role == Role::CollAll) {
      PartnerGroup group;
      for (const Member& m : members)
        if (in_range(m.rank, m.step)) {
          group.members.push_back(Partner{static_cast<std::uint32_t>(m.rank), m.step, m.w_send});
          sent(m.rank, m.step, m.w_send);
        }
      if (group.members.size() < 2) continue;  // nobody to hear from
      const auto id = static_cast<std::uint32_t>(out.groups.size());
      for (const Partner& p : group.members) {
        auto& g = out.input[p.rank][p.step].groups;
        if (g.empty() || g.back() != id) g.push_back(id);
      }
      out.groups.push_back(std::move(group));
      continue;
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
        if (hears && from.rank != to.rank) {
          add_partner(step, from.rank, from.step, to.rank, from.w_send);
          sent(from.rank, from.step, from.w_send);
        }
      }
    }
  }
  for (auto& rank_steps : out.input)
    for (StepRecord& step : rank_steps) merge_partners(step);
  return out;
}

void add_machine_terms(AlignedSteps& aligned, std::span<const MachineCharge> charges) {
  for (const MachineCharge& c : charges) {
    if (c.rank < 0 || static_cast<std::size_t>(c.rank) >= aligned.input.size()) continue;
    const auto r = static_cast<std::size_t>(c.rank);
    const auto& es = aligned.event_step[r];
    if (c.event >= es.size() || es[c.event] >= aligned.input[r].size()) continue;
    aligned.input[r][es[c.event]].extra += c.seconds;
  }
}

}  // namespace mstep::model
