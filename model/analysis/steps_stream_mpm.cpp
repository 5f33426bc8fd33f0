// The streamed M-steps (model/analysis/steps_stream_impl.hpp): mpm()'s Phi evaluated in dependency
// order as steps become ready, the step table's rows, BSPWB's sum, and the dropping of steps that
// nothing can name any more.
#include <algorithm>
#include <cmath>

#include "model/analysis/steps_stream_impl.hpp"

namespace mstep::model {

// All but advance() are called only from this file, and declared inline so that GCC inlines them
// as it did when they were defined in the class (out of line: 0.6% more instructions in the pass).

// The partner's departure: Phi(t-1,j) + its send point, and its h and communication term.
inline void StepStream::Impl::partner_terms(const PendingPartner& p, double& ready_at, double& H, double& comm) {
  Entry& sender = entry(p.rank, p.step);
  const double w = w_of(p.rank, sender);
  const double ws = std::min(tl_.duration(static_cast<int>(p.rank), std::min(p.before, sender.compute)), w);
  ready_at = std::max(ready_at, start_of(p.rank, p.step) + ws);
  const double h = h_of(sender);
  H = std::max(H, h);
  comm = std::max(comm, params_->g * h + sender.extra);
}

// Predicts rank r's next steps as far as they are ready.
void StepStream::Impl::advance(std::size_t r) {
  RankStepState& rs = ranks_[r];
  while (rs.evaluated < rs.closed) {
    const std::uint32_t s = rs.evaluated;
    Entry& own = entry(r, s);
    if (own.open_receives > 0) return;  // queued again when they are known
    if (params_) {
      for (const PendingPartner& p : own.incoming)
        if (!ready(p.rank, p.step, r)) return;
      for (const std::uint32_t g : own.groups) {
        Group& grp = groups_.at(g);
        if (grp.evaluated) continue;
        for (const PendingPartner& p : grp.members)
          if (!ready(p.rank, p.step, r)) return;
      }
      evaluate(r, s);
    }
    row(r, s);
    bsp(r, s);
    rs.evaluated = s + 1;
    release(r, s);
    for (const std::int32_t w : rs.waiters) queue(static_cast<std::size_t>(w));
    rs.waiters.clear();
    prune(r);
  }
}

inline void StepStream::Impl::evaluate(std::size_t r, std::uint32_t s) {
  Entry& own = entry(r, s);
  double ready_at = start_of(r, s) + w_of(r, own);
  double H = h_of(own);
  double comm = params_->g * H + own.extra;
  for (const PendingPartner& p : own.incoming) partner_terms(p, ready_at, H, comm);
  for (const std::uint32_t id : own.groups) {
    Group& g = groups_.at(id);
    if (!g.evaluated) {
      // mpm()'s evaluate_group: from 0, over every member (its own step included).
      double gr = 0, gH = 0, gc = 0;
      for (const PendingPartner& p : g.members) partner_terms(p, gr, gH, gc);
      g.ready = gr, g.H = gH, g.comm = gc;
      g.evaluated = true;
      for (const PendingPartner& p : g.members) --entry(p.rank, p.step).refs;
    }
    ready_at = std::max(ready_at, g.ready);
    H = std::max(H, g.H);
    comm = std::max(comm, g.comm);
  }
  const double latency = (H > 0 || params_->latency_on_empty_steps) ? params_->L : 0.0;
  own.phi = ready_at + comm + latency;
  last_phi_[r] = own.phi;
}

// The step no longer needs its partners.
inline void StepStream::Impl::release(std::size_t r, std::uint32_t s) {
  Entry& own = entry(r, s);
  for (const PendingPartner& p : own.incoming) {
    --entry(p.rank, p.step).refs;
    if (p.rank != r) queue_prune_.push_back(p.rank);
  }
  for (const std::uint32_t id : own.groups) {
    auto it = groups_.find(id);
    if (--it->second.refs == 0) {
      if (!it->second.evaluated)  // (no parameters) the group's hold on its members ends too
        for (const PendingPartner& p : it->second.members) --entry(p.rank, p.step).refs;
      for (const PendingPartner& p : it->second.members) queue_prune_.push_back(p.rank);
      groups_.erase(it);
    }
  }
  // Emptied, keeping a small list's memory for the slot's next step (freeing it cost a malloc
  // and a free a step); a large one goes now, as Entry::shrink would at the slot's reuse.
  own.incoming.clear();
  own.groups.clear();
  own.shrink_lists();
  for (const std::uint32_t j : queue_prune_) prune(j);
  queue_prune_.clear();
}

inline void StepStream::Impl::row(std::size_t r, std::uint32_t s) {
  if (keep_ == 0) return;
  Entry& own = entry(r, s);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const bool mpm = params_.has_value();
  const double actual_s = own.end_s - (s > 0 ? entry(r, s - 1).end_s : 0.0);
  const double mpm_end_s = mpm ? own.phi : nan;
  const double mpm_s = mpm_end_s - (s > 0 && mpm ? entry(r, s - 1).phi : 0.0);
  const double miss_s = mpm_s - actual_s;
  // Keep the `keep_` largest misses (without MPM: the steps that end first) in a heap whose
  // front is the kept row that misses least (ends last). Both orders break ties by rank and
  // step, so the rows kept do not depend on the order the pass hands the steps over in. A row
  // is built only if kept (most are not, on a long run); the partner list is copied only then,
  // and a large communicator heard whole is named by its shared member list, not copied.
  const auto rank = static_cast<std::int32_t>(r);
  const bool keep = rows_.size() < keep_ || (mpm ? misses_more(std::abs(miss_s), rank, s + 1, rows_.front())
                                                 : ends_before(own.end_s, rank, s + 1, rows_.front()));
  if (!keep) {
    own.forget_partners();
    return;
  }
  StepRow row;
  row.rank = rank;
  row.step = s + 1;
  row.actual_end_s = own.end_s;
  row.mpm_end_s = mpm_end_s;
  row.error_pct = mpm && row.actual_end_s > 0 ? error_pct(row.actual_end_s, row.mpm_end_s) : nan;
  row.actual_s = actual_s;
  row.mpm_s = mpm_s;
  row.miss_s = miss_s;
  row.step_error_pct = mpm && row.actual_s > 0 ? error_pct(row.actual_s, row.mpm_s) : nan;
  row.compute_s = tl_.duration(static_cast<int>(r), own.compute);
  row.mpi_s = tl_.duration(static_cast<int>(r), own.mpi);
  row.bytes_in = own.bytes_in;
  row.bytes_out = own.bytes_out;
  // A large communicator heard whole is named as the trace names it (StepRecord::whole_comm),
  // and as the in-memory report's rows do.
  const MemberList* heard = own.heard_whole ? &own.heard_whole->world_ranks : nullptr;
  const bool named = heard && heard->size() >= kListedMembers && own.heard_whole->id != kSharedCommId;
  if (!heard || heard->empty() || named) {
    row.partners.assign(own.gamma.begin(), own.gamma.end());
    if (named) row.partners_all_of = *heard;
  } else {  // sorted union, as the tracker's own list would be with every member in it
    std::vector<std::int32_t> members(heard->begin(), heard->end());
    std::erase_if(members, [](std::int32_t m) { return m < 0; });
    std::sort(members.begin(), members.end());
    std::set_union(own.gamma.begin(), own.gamma.end(), members.begin(), members.end(),
                   std::back_inserter(row.partners));
  }
  own.forget_partners();
  const auto smaller = [mpm](const StepRow& a, const StepRow& b) {
    return mpm ? misses_more(a, b) : ends_before(a.actual_end_s, a.rank, a.step, b);
  };
  if (rows_.size() < keep_) {
    rows_.push_back(std::move(row));
    std::push_heap(rows_.begin(), rows_.end(), smaller);
  } else {
    std::pop_heap(rows_.begin(), rows_.end(), smaller);
    rows_.back() = std::move(row);
    std::push_heap(rows_.begin(), rows_.end(), smaller);
  }
}

inline bool StepStream::Impl::ends_before(double end_s, std::int32_t rank, std::uint32_t step, const StepRow& b) {
  if (end_s != b.actual_end_s) return end_s < b.actual_end_s;
  return rank != b.rank ? rank < b.rank : step < b.step;
}

inline void StepStream::Impl::bsp(std::size_t r, std::uint32_t s) {
  if (!bsp_) return;
  const Entry& own = entry(r, s);
  bsp_->step(s, w_of(r, own), h_of(own), own.extra);
}

// Drops the rank's oldest steps that nothing can name any more.
inline void StepStream::Impl::prune(std::size_t r) {
  RankStepState& rs = ranks_[r];
  while (rs.entries.size() >= 2) {
    const Entry& a = rs.entries[0];
    const Entry& b = rs.entries[1];
    const bool a_done = rs.base < rs.evaluated && a.refs == 0 && a.open_sends == 0 && a.open_receives == 0;
    const bool b_done = rs.base + 1 < rs.evaluated && b.refs == 0 && b.open_sends == 0 && b.open_receives == 0;
    if (!a_done || !b_done) return;
    Entry* slot = rs.entries.pop_front();
    slot->shrink();
    pool_.give_back(slot);
    ++rs.base;
    --held_;
  }
}
}  // namespace mstep::model
