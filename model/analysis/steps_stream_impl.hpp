// Internal to the streamed M-steps (model/analysis/steps_stream.hpp): the class behind StepStream.
// Its intake (records, messages, collectives, a rank's end) is defined here; the MPM evaluation of
// the steps as they become ready, in steps_stream_mpm.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "format/step_tracker.hpp"
#include "model/analysis/steps_held.hpp"
#include "model/analysis/steps_stream.hpp"
#include "model/cost/bspwb_stream.hpp"
#include "model/trace/matching.hpp"
#include "model/trace/rank_comms.hpp"

namespace mstep::model {

class StepStream::Impl {
 public:
  using PendingPartner = steps_held::PendingPartner;
  using Entry = steps_held::Entry;
  using StepRing = steps_held::StepRing;
  using EntryPool = steps_held::EntryPool;
  using Group = steps_held::Group;
  using RankStepState = steps_held::RankStepState;
  using Kind = steps_held::Kind;

  Impl(std::span<const RankTrace* const> metas, const Timeline& tl, const BspParams* params,
       std::span<const MachineCharge> charges, std::size_t keep_rows)
      : tl_(tl), params_(params ? std::optional<BspParams>(*params) : std::nullopt), keep_(keep_rows), ranks_(metas.size()) {
    const auto P = metas.size();
    double zero = std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < P; ++r) {
      if (!metas[r] || metas[r]->events.empty()) continue;
      zero = std::min(zero, tl.seconds(static_cast<int>(r), metas[r]->events.front().t_exit));
      RankStepState& rs = ranks_[r];
      rs.present = true;
      ++present_;
      rs.comms = RankComms(metas[r]->comms);
      rs.tracker.emplace(static_cast<std::int32_t>(r), static_cast<std::int32_t>(P), metas[r]->events.front().t_enter,
                       /*reserve_partners=*/4);
    }
    zero_ = std::isfinite(zero) ? zero : 0.0;
    if (params_) bsp_.emplace(*params_, P, present_);
    for (const MachineCharge& c : charges)
      if (c.rank >= 0 && static_cast<std::size_t>(c.rank) < P) ranks_[static_cast<std::size_t>(c.rank)].charges.push_back(c);
    for (RankStepState& rs : ranks_)
      std::stable_sort(rs.charges.begin(), rs.charges.end(),
                       [](const MachineCharge& a, const MachineCharge& b) { return a.event < b.event; });
  }

  RecordTag record(std::int32_t rank, std::uint32_t index, const Event& e) {
    const auto r = static_cast<std::size_t>(rank);
    RankStepState& rs = ranks_[r];
    if (!rs.present) return {};
    if (!rs.started) rs.started = true, rs.last_exit = e.t_enter;
    rs.last_t_exit = e.t_exit;
    // The rank's computation so far, as StepTracker counts it (compute_before in step_alignment).
    if (!e.continuation()) {
      if (e.t_enter > rs.last_exit) rs.total_compute += e.t_enter - rs.last_exit;
      rs.last_exit = std::max(rs.last_exit, e.t_exit);
    }
    const CommDef* def = rs.comms.find(e.comm);
    const bool coll = is_collective_call(e);
    // Where the rank hears every member, the step keeps the shared member list instead of the
    // tracker, merged into its partners where a row needs it.
    const bool hears_all = feed_step_tracker(*rs.tracker, e, def);
    const std::uint32_t step = rs.tracker->current_index() - (coll ? 1 : 0) - 1;
    take_closed(r);
    if (step < rs.base) return {};  // cannot happen in one thread's order
    Entry& en = entry(r, step);
    if (hears_all) en.heard_whole = def;
    // Machine terms of this record go to its step.
    while (rs.next_charge < rs.charges.size() && rs.charges[rs.next_charge].event < index) ++rs.next_charge;
    while (rs.next_charge < rs.charges.size() && rs.charges[rs.next_charge].event == index)
      en.extra += rs.charges[rs.next_charge++].seconds;
    const std::uint64_t begin = step < rs.closed ? en.begin_compute : rs.closed_compute;
    const std::uint64_t before = rs.total_compute - std::min(rs.total_compute, begin);
    const auto world = static_cast<std::int32_t>(ranks_.size());
    RecordTag tag;
    if (coll) {
      ++en.open_receives;
      ++en.open_sends;
      tag = steps_held::make_tag(Kind::Collective, step, before);
    } else if (e.peer >= 0 && e.peer < world) {
      if (is_p2p_send(e)) {
        ++en.open_sends;
        tag = steps_held::make_tag(Kind::Send, step, before);
      } else if (is_p2p_recv(e)) {
        ++en.open_receives;
        tag = steps_held::make_tag(Kind::Receive, step, before);
      }
    }
    drain();  // after the counts: a collective's step closed above must wait for its instance
    return tag;
  }

  void message(const StreamedMessage& m) {
    const Message& msg = m.message;
    if (steps_held::kind_of(m.send_tag) != Kind::Send || steps_held::kind_of(m.recv_tag) != Kind::Receive) return;
    const std::uint32_t ss = steps_held::step_of(m.send_tag);
    const std::uint64_t before = m.send_tag.b;
    const std::uint32_t rs = steps_held::step_of(m.recv_tag);
    Entry& receiver = entry(static_cast<std::size_t>(msg.dst), rs);
    if (msg.src != msg.dst) {
      receiver.incoming.push_back({static_cast<std::uint32_t>(msg.src), ss, before});
      ++entry(static_cast<std::size_t>(msg.src), ss).refs;
    }
    --entry(static_cast<std::size_t>(msg.src), ss).open_sends;
    --receiver.open_receives;
    queue(static_cast<std::size_t>(msg.dst));
    prune(static_cast<std::size_t>(msg.src));
    drain();
  }

  void unmatched(std::int32_t rank, RecordTag tag) {
    const Kind k = steps_held::kind_of(tag);
    if (k != Kind::Send && k != Kind::Receive) return;
    Entry& en = entry(static_cast<std::size_t>(rank), steps_held::step_of(tag));
    if (k == Kind::Receive) --en.open_receives;
    else --en.open_sends;
    queue(static_cast<std::size_t>(rank));
    prune(static_cast<std::size_t>(rank));
    drain();
  }

  void collective(std::span<const StreamedMember> members) {
    struct Member {
      std::uint32_t rank, step;
      std::uint64_t before;
      bool root;
      Role role;
    };
    std::vector<Member> ms;
    for (const auto& c : members) {
      if (steps_held::kind_of(c.tag) != Kind::Collective) continue;
      ms.push_back({static_cast<std::uint32_t>(c.rank), steps_held::step_of(c.tag), c.tag.b, (c.call.flags & kRoot) != 0,
                    op_role(c.call.op)});
    }
    // Everybody hears everybody (Barrier, All*): one partner group, not n^2 partners.
    const bool all = !members.empty() && op_role(members.front().call.op) == Role::CollAll;
    if (all && ms.size() >= 2) {
      const auto id = next_group_++;
      Group& g = groups_[id];
      for (const Member& m : ms) {
        g.members.push_back({m.rank, m.step, m.before});
        Entry& en = entry(m.rank, m.step);
        ++en.refs;  // the group's hold on its member
        if (en.groups.empty() || en.groups.back() != id) {
          en.groups.push_back(id);
          ++g.refs;
        }
      }
    } else if (!all) {
      for (const Member& to : ms)
        for (const Member& from : ms) {
          // Who hears from whom: the root's data in CollRootOut; the root hears everybody in CollRootIn.
          const bool hears = to.role == Role::CollAll || (to.role == Role::CollRootOut && from.root && !to.root) ||
                             (to.role == Role::CollRootIn && to.root);
          if (hears && from.rank != to.rank) {
            entry(to.rank, to.step).incoming.push_back({from.rank, from.step, from.before});
            ++entry(from.rank, from.step).refs;
          }
        }
    }
    for (const Member& m : ms) {
      Entry& en = entry(m.rank, m.step);
      --en.open_receives;
      --en.open_sends;
      queue(m.rank);
    }
    for (const Member& m : ms) prune(m.rank);
    drain();
  }

  void rank_end(std::int32_t rank, std::uint64_t records) {
    const auto r = static_cast<std::size_t>(rank);
    RankStepState& rs = ranks_[r];
    if (!rs.present || records == 0) return;
    rs.tracker->finish(rs.last_t_exit);
    take_closed(r);
    rs.tracker.reset();
    drain();
    if (bsp_) bsp_->rank_ended(rs.closed);
  }

  StreamedSteps finish() {
    for (std::size_t r = 0; r < ranks_.size(); ++r) queue(r);
    drain();
    StreamedSteps out;
    out.steps = steps_;
    out.peak_steps_held = peak_held_;
    if (params_) {
      out.bspwb_total = bsp_->total();
      std::uint64_t unevaluated = 0;
      double psi = 0;
      for (std::size_t r = 0; r < ranks_.size(); ++r) {
        unevaluated += ranks_[r].closed - ranks_[r].evaluated;
        if (ranks_[r].closed > 0 && ranks_[r].evaluated == ranks_[r].closed) psi = std::max(psi, last_phi_[r]);
      }
      if (unevaluated == 0) out.mpm_psi = psi;
      else out.mpm_problem = fmt::format("{} steps depend on each other in a cycle or on steps that never ended", unevaluated);
    }
    std::sort(rows_.begin(), rows_.end(), [](const StepRow& a, const StepRow& b) {
      return a.rank != b.rank ? a.rank < b.rank : a.step < b.step;
    });
    out.rows = std::move(rows_);
    return out;
  }

 private:
  // (A reference stays valid while its step is held: the pool's slots do not move.)
  Entry& entry(std::size_t r, std::uint32_t step) {
    RankStepState& rs = ranks_[r];
    if (rs.base + rs.entries.size() <= step) [[unlikely]] add_steps(rs, step);
    return rs.entries[step - rs.base];
  }
  // Out of line, so that entry() inlines into its many callers.
  [[gnu::noinline]] void add_steps(RankStepState& rs, std::uint32_t step) {
    while (rs.base + rs.entries.size() <= step) {
      Entry* slot = pool_.take();
      slot->reset();
      rs.entries.push_back(slot);
      ++held_;
      peak_held_ = std::max(peak_held_, held_);
    }
  }

  void take_closed(std::size_t r) {
    RankStepState& rs = ranks_[r];
    if (rs.tracker->closed().empty()) return;
    bool many = false;  // a step of many partners: the tracker may hold memory worth giving back
    for (const mstep::StepRecord& s : rs.tracker->closed()) {
      many = many || s.partners.size() > StepTracker::kListedPartners;
      Entry& en = entry(r, rs.closed);
      en.closed = true;
      en.compute = s.compute;
      en.mpi = s.mpi;
      en.bytes_in = s.bytes_in;
      en.bytes_out = s.bytes_out;
      en.begin_compute = rs.closed_compute;
      en.end_s = tl_.seconds(static_cast<int>(r), s.end) - zero_;
      en.gamma.assign(s.partners.begin(), s.partners.end());
      rs.closed_compute += s.compute;
      ++rs.closed;
      ++steps_;
      queue(r);
      for (const std::int32_t w : rs.waiters) queue(static_cast<std::size_t>(w));
      rs.waiters.clear();
    }
    rs.tracker->clear_closed();
    // Only a step of more partners than the tracker lists leaves it lists or bits to trim (a look
    // over its slots a step was 1.4% of a NetPIPE report's pass).
    if (many) rs.tracker->trim(256);
  }

  void queue(std::size_t r) {
    if (ranks_[r].queued || !ranks_[r].present) return;
    ranks_[r].queued = true;
    work_.push_back(r);
  }

  void drain() {
    if (draining_) return;
    draining_ = true;
    while (!work_.empty()) {
      const std::size_t r = work_.back();
      work_.pop_back();
      ranks_[r].queued = false;
      advance(r);
    }
    draining_ = false;
  }

  double w_of(std::size_t r, const Entry& e) const { return tl_.duration(static_cast<int>(r), e.compute); }
  double h_of(const Entry& e) const {
    return h_relation(e.bytes_in, e.bytes_out, params_ ? params_->combine : HCombine::Sum);
  }
  // Phi(t-1, j): when rank j could start its step t.
  double start_of(std::size_t j, std::uint32_t t) { return t == 0 ? 0.0 : entry(j, t - 1).phi; }
  // Is (j,t) closed with Phi(t-1, j) known? If not, `waiter` waits for j.
  bool ready(std::uint32_t j, std::uint32_t t, std::size_t waiter) {
    RankStepState& rs = ranks_[j];
    if (t < rs.closed && rs.evaluated >= t) return true;
    rs.waiters.push_back(static_cast<std::int32_t>(waiter));
    return false;
  }
  // ---- MPM as steps become ready (steps_stream_mpm.cpp) ----------------------------------
  void partner_terms(const PendingPartner& p, double& ready_at, double& H, double& comm);
  void advance(std::size_t r);
  void evaluate(std::size_t r, std::uint32_t s);
  void release(std::size_t r, std::uint32_t s);
  void row(std::size_t r, std::uint32_t s);
  static bool ends_before(double end_s, std::int32_t rank, std::uint32_t step, const StepRow& b);
  void bsp(std::size_t r, std::uint32_t s);
  void prune(std::size_t r);

  const Timeline& tl_;
  std::optional<BspParams> params_;
  std::size_t keep_;
  std::vector<RankStepState> ranks_;
  EntryPool pool_;
  std::size_t present_ = 0;
  double zero_ = 0;
  std::unordered_map<std::uint32_t, Group> groups_;
  std::uint32_t next_group_ = 0;
  std::vector<std::size_t> work_;
  std::vector<std::uint32_t> queue_prune_;
  bool draining_ = false;
  std::optional<BspwbStream> bsp_;
  std::vector<StepRow> rows_;
  std::vector<double> last_phi_ = std::vector<double>(ranks_.size(), 0.0);  // Phi of each rank's latest step
  std::uint64_t steps_ = 0;
  std::size_t held_ = 0, peak_held_ = 0;
};

}  // namespace mstep::model
