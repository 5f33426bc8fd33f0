#include "model/analysis/steps_stream.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "format/step_tracker.hpp"
#include "model/cost/bspwb_stream.hpp"
#include "model/trace/matching.hpp"
#include "model/trace/rank_comms.hpp"

namespace mstep::model {
namespace {

// A partner as the receiving step holds it until predicted: the sender's step and the ticks of
// its computation before the message left (clamped to the step's when used, as align_steps does).
struct PendingPartner {
  std::uint32_t rank = 0, step = 0;
  std::uint64_t before = 0;
};

struct Entry {
  bool closed = false, evaluated = false;
  std::uint64_t compute = 0, mpi = 0, bytes_in = 0, bytes_out = 0;
  std::uint64_t begin_compute = 0;  // the rank's computation before this step
  double end_s = 0;                 // actual end, after zero
  double extra = 0;                 // machine terms
  double phi = 0;
  std::vector<PendingPartner> incoming;
  std::vector<std::uint32_t> groups;
  std::vector<std::int32_t> gamma;  // the tracker's partner list (for the step table)
  MemberList gamma_members;         // and the members of the collective that closed the step, if it heard them all
  bool gamma_named = false;         // those members are named as a communicator, not listed (StepRow::partners_all_of)
  std::uint32_t open_receives = 0;  // receives and collectives whose partners are not known yet
  std::uint32_t open_sends = 0;     // messages and collectives that may still name this step
  std::uint32_t refs = 0;           // steps and groups not yet predicted that named this step

  // Back to a new step's state in place: a ring slot is reused for step after step, and its
  // lists keep their memory (a step a record: assigning a new Entry cost a fifth of the stream).
  void reset() {
    closed = evaluated = false;
    compute = mpi = bytes_in = bytes_out = begin_compute = 0;
    end_s = extra = phi = 0;
    incoming.clear();
    groups.clear();
    forget_partners();
    open_receives = open_sends = refs = 0;
  }
  // The partner list kept for the step table, once its row is made (or not kept).
  void forget_partners() {
    gamma.clear();
    gamma_members = {};
    gamma_named = false;
  }
  // What a step's lists hold beyond a few entries goes when the step is dropped (a gather's root
  // hears every rank once; its slot need not keep that).
  void shrink() {
    shrink_lists();
    if (gamma.capacity() > kKeep) std::vector<std::int32_t>().swap(gamma);
    gamma_members = {};
  }
  void shrink_lists() {
    if (incoming.capacity() > kKeep) std::vector<PendingPartner>().swap(incoming);
    if (groups.capacity() > kKeep) std::vector<std::uint32_t>().swap(groups);
  }
  static constexpr std::size_t kKeep = 16;
};

// A rank's held steps: a ring that grows by doubling (a deque of these large entries would
// allocate every few steps). References stay valid until the next push_back.
class StepRing {
 public:
  std::size_t size() const { return n_; }
  Entry& operator[](std::size_t i) { return buf_[(head_ + i) & mask_]; }
  const Entry& operator[](std::size_t i) const { return buf_[(head_ + i) & mask_]; }
  void push_back() {
    if (n_ == buf_.size()) {
      std::vector<Entry> bigger(std::max<std::size_t>(2, 2 * buf_.size()));
      for (std::size_t i = 0; i < n_; ++i) bigger[i] = std::move((*this)[i]);
      buf_ = std::move(bigger);
      head_ = 0;
      mask_ = buf_.size() - 1;
    }
    (*this)[n_].reset();
    ++n_;
  }
  void pop_front() {
    (*this)[0].shrink();
    head_ = (head_ + 1) & mask_;
    --n_;
  }

 private:
  std::vector<Entry> buf_;
  std::size_t head_ = 0, n_ = 0, mask_ = 0;  // mask_: capacity - 1 (a power of two)
};

struct Group {
  std::vector<PendingPartner> members;
  std::uint32_t refs = 0;  // member steps not yet predicted
  bool evaluated = false;
  double ready = 0, H = 0, comm = 0;
};

struct RankStepState {
  bool present = false;
  std::optional<StepTracker> tracker;
  RankComms comms;
  StepRing entries;  // steps base.. (held ones)
  std::uint32_t base = 0;
  std::uint32_t closed = 0, evaluated = 0;
  std::uint64_t closed_compute = 0;  // sum of the closed steps' computation
  std::uint64_t total_compute = 0, last_exit = 0;
  bool started = false;
  std::uint64_t last_t_exit = 0;
  std::vector<std::int32_t> waiters;  // ranks waiting for this one's progress
  bool queued = false;
  // Machine charges of this rank, by record.
  std::vector<MachineCharge> charges;
  std::size_t next_charge = 0;
};

// The tag a record carries through the pass (RecordTag): its step, its kind and the ticks of its
// step's computation before it (its send point).
enum class Kind : std::uint64_t { None = 0, Send = 1, Receive = 2, Collective = 3 };
RecordTag make_tag(Kind k, std::uint32_t step, std::uint64_t before) {
  return {static_cast<std::uint64_t>(step) | static_cast<std::uint64_t>(k) << 32, before};
}
Kind kind_of(RecordTag t) { return static_cast<Kind>(t.a >> 32); }
std::uint32_t step_of(RecordTag t) { return static_cast<std::uint32_t>(t.a); }


}  // namespace

class StepStream::Impl {
 public:
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
      rs.tracker.emplace(static_cast<std::int32_t>(r), static_cast<std::int32_t>(P), metas[r]->events.front().t_enter);
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
    if (hears_all && step >= rs.base) {
      Entry& en = entry(r, step);
      en.gamma_members = def->world_ranks;
      // As the trace names them (StepRecord::whole_comm), and as the in-memory report's rows do.
      en.gamma_named = def->world_ranks.size() >= kListedMembers && def->id != kSharedCommId;
    }
    if (step < rs.base) return {};  // cannot happen in one thread's order
    Entry& en = entry(r, step);  // (valid to the end: nothing below adds a step)
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
      tag = make_tag(Kind::Collective, step, before);
    } else if (e.peer >= 0 && e.peer < world) {
      if (is_p2p_send(e)) {
        ++en.open_sends;
        tag = make_tag(Kind::Send, step, before);
      } else if (is_p2p_recv(e)) {
        ++en.open_receives;
        tag = make_tag(Kind::Receive, step, before);
      }
    }
    drain();  // after the counts: a collective's step closed above must wait for its instance
    return tag;
  }

  void message(const StreamedMessage& m) {
    const Message& msg = m.message;
    if (kind_of(m.send_tag) != Kind::Send || kind_of(m.recv_tag) != Kind::Receive) return;
    const std::uint32_t ss = step_of(m.send_tag);
    const std::uint64_t before = m.send_tag.b;
    const std::uint32_t rs = step_of(m.recv_tag);
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
    const Kind k = kind_of(tag);
    if (k != Kind::Send && k != Kind::Receive) return;
    Entry& en = entry(static_cast<std::size_t>(rank), step_of(tag));
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
      if (kind_of(c.tag) != Kind::Collective) continue;
      ms.push_back({static_cast<std::uint32_t>(c.rank), step_of(c.tag), c.tag.b, (c.call.flags & kRoot) != 0,
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
  Entry& entry(std::size_t r, std::uint32_t step) {
    RankStepState& rs = ranks_[r];
    while (rs.base + rs.entries.size() <= step) [[unlikely]] {
      rs.entries.push_back();
      ++held_;
      peak_held_ = std::max(peak_held_, held_);
    }
    return rs.entries[step - rs.base];
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
  // The partner's departure: Phi(t-1,j) + its send point, and its h and communication term.
  void partner_terms(const PendingPartner& p, double& ready_at, double& H, double& comm) {
    Entry& sender = entry(p.rank, p.step);
    const double w = w_of(p.rank, sender);
    const double ws = std::min(tl_.duration(static_cast<int>(p.rank), std::min(p.before, sender.compute)), w);
    ready_at = std::max(ready_at, start_of(p.rank, p.step) + ws);
    const double h = h_of(sender);
    H = std::max(H, h);
    comm = std::max(comm, params_->g * h + sender.extra);
  }

  // Predicts rank r's next steps as far as they are ready.
  void advance(std::size_t r) {
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

  void evaluate(std::size_t r, std::uint32_t s) {
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
  void release(std::size_t r, std::uint32_t s) {
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

  void row(std::size_t r, std::uint32_t s) {
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
    if (own.gamma_members.empty() || own.gamma_named) {
      row.partners = own.gamma;
      if (own.gamma_named) row.partners_all_of = own.gamma_members;
    } else {  // sorted union, as the tracker's own list would be with every member in it
      std::vector<std::int32_t> members(own.gamma_members.begin(), own.gamma_members.end());
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

  static bool ends_before(double end_s, std::int32_t rank, std::uint32_t step, const StepRow& b) {
    if (end_s != b.actual_end_s) return end_s < b.actual_end_s;
    return rank != b.rank ? rank < b.rank : step < b.step;
  }

  void bsp(std::size_t r, std::uint32_t s) {
    if (!bsp_) return;
    const Entry& own = entry(r, s);
    bsp_->step(s, w_of(r, own), h_of(own), own.extra);
  }

  // Drops the rank's oldest steps that nothing can name any more.
  void prune(std::size_t r) {
    RankStepState& rs = ranks_[r];
    while (rs.entries.size() >= 2) {
      const Entry& a = rs.entries[0];
      const Entry& b = rs.entries[1];
      const bool a_done = rs.base < rs.evaluated && a.refs == 0 && a.open_sends == 0 && a.open_receives == 0;
      const bool b_done = rs.base + 1 < rs.evaluated && b.refs == 0 && b.open_sends == 0 && b.open_receives == 0;
      if (!a_done || !b_done) return;
      rs.entries.pop_front();
      ++rs.base;
      --held_;
    }
  }

  const Timeline& tl_;
  std::optional<BspParams> params_;
  std::size_t keep_;
  std::vector<RankStepState> ranks_;
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

StepStream::StepStream(std::span<const RankTrace* const> metas, const Timeline& timeline, const BspParams* params,
                       std::span<const MachineCharge> charges, std::size_t keep_rows)
    : impl_(std::make_unique<Impl>(metas, timeline, params, charges, keep_rows)) {}
StepStream::~StepStream() = default;
RecordTag StepStream::record(std::int32_t rank, std::uint32_t index, const Event& e) {
  return impl_->record(rank, index, e);
}
void StepStream::message(const StreamedMessage& m) { impl_->message(m); }
void StepStream::unmatched(std::int32_t rank, RecordTag tag) { impl_->unmatched(rank, tag); }
void StepStream::collective(std::span<const StreamedMember> members) { impl_->collective(members); }
void StepStream::rank_end(std::int32_t rank, std::uint64_t records) { impl_->rank_end(rank, records); }
StreamedSteps StepStream::finish() { return impl_->finish(); }

}  // namespace mstep::model
