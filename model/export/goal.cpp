#include "model/export/goal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "model/replay/replay_collectives.hpp"
#include "model/trace/comm_ids.hpp"
#include "model/trace/matching.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kCollectiveTags = 1u << 30;  // tags of decomposed collectives start here
// GOAL's tags are not negative: mstep's own (kNeighborTag) go just below kCollectiveTags.
std::uint32_t goal_tag(std::int32_t tag) {
  return tag >= 0 ? static_cast<std::uint32_t>(tag) : kCollectiveTags - static_cast<std::uint32_t>(-static_cast<std::int64_t>(tag));
}

// One decomposed collective instance, as every member runs it.
struct Instance {
  CollShape shape;
  const MemberList* members = nullptr;
  bool usable = false;
};

// Collective instances with the shape the replay gives them (replay_link.cpp's rules: the members
// agree on the operation, size and root, the root's sizes win, every member has a trace).
std::vector<Instance> instances_of(std::span<const RankTrace* const> ranks,
                                   const std::vector<std::vector<CollectiveCall>>& calls,
                                   std::vector<std::vector<std::uint32_t>>& instance_at,
                                   const CollectiveSubstitutes& subs) {
  std::vector<Instance> out(calls.size());
  for (std::size_t k = 0; k < calls.size(); ++k) {
    Instance& inst = out[k];
    bool bad = false, first = true;
    for (const CollectiveCall& c : calls[k]) {
      const RankTrace& t = *ranks[static_cast<std::size_t>(c.rank)];
      instance_at[static_cast<std::size_t>(c.rank)][c.event] = static_cast<std::uint32_t>(k);
      const Event& e = t.events[c.event];
      const CommDef* def = find_comm(t.comms, e.comm);
      const std::int64_t me = def && !def->inter ? def->world_ranks.rank_of(c.rank) : -1;
      if (me < 0) {
        bad = true;
        continue;
      }
      const auto n = static_cast<std::uint32_t>(def->world_ranks.size());
      std::int64_t root = 0;
      const Role role = op_role(e.op);
      if (role == Role::CollRootOut || role == Role::CollRootIn) root = (e.flags & kRoot) ? me : def->world_ranks.rank_of(e.peer);
      if (root < 0) {
        bad = true;
        continue;
      }
      const auto r = static_cast<std::uint32_t>(root);
      if (first) {
        inst.members = &def->world_ranks;
        inst.shape = choose_collective(e.op, n, r, collective_block_bytes(e, n), subs, *inst.members);
        first = false;
      } else if (inst.shape.op != e.op || inst.shape.n != n || inst.shape.root != r) {
        bad = true;
      } else if (e.flags & kRoot) {
        inst.shape = choose_collective(e.op, n, r, collective_block_bytes(e, n), subs, *inst.members);
      }
    }
    inst.usable = !bad && !first && calls[k].size() == inst.shape.n && inst.shape.algo != CollAlgo::Unsupported;
  }
  return out;
}

// Writes one rank's schedule into `buf`.
class RankWriter {
 public:
  RankWriter(std::string& buf, GoalSummary& sum) : buf_(buf), sum_(sum) {}

  // An operation after `after` (0: none); returns its label.
  std::uint64_t op(const std::string& text, std::uint64_t after, bool after_nonblocking) {
    ++label_;
    buf_ += fmt::format("l{}: {}\n", label_, text);
    if (after) buf_ += fmt::format("l{} {} l{}\n", label_, after_nonblocking ? "irequires" : "requires", after);
    return label_;
  }
  void requires_(std::uint64_t op, std::uint64_t dep) { buf_ += fmt::format("l{} requires l{}\n", op, dep); }
  // The next operation in program order: after the last one.
  std::uint64_t next(const std::string& text, bool nonblocking) {
    const std::uint64_t x = op(text, prev_, prev_nonblocking_);
    prev_ = x;
    prev_nonblocking_ = nonblocking;
    return x;
  }
  void compute(double ns) { pending_ns_ += ns; }
  void flush_compute() {
    const auto ns = static_cast<std::uint64_t>(std::llround(pending_ns_));
    pending_ns_ = 0;
    if (ns == 0) return;
    next(fmt::format("calc {}", ns), false);
    ++sum_.calcs;
  }
  // A join of `ops` (all after the last operation): the call returns when all are done.
  void join(const std::vector<std::uint64_t>& ops) {
    const std::uint64_t j = op("calc 0", prev_, prev_nonblocking_);
    for (const std::uint64_t x : ops) requires_(j, x);
    prev_ = j;
    prev_nonblocking_ = false;
  }
  std::uint64_t prev() const { return prev_; }
  bool prev_nonblocking() const { return prev_nonblocking_; }

 private:
  std::string& buf_;
  GoalSummary& sum_;
  std::uint64_t label_ = 0, prev_ = 0;
  bool prev_nonblocking_ = false;
  double pending_ns_ = 0;
};

}  // namespace

GoalSummary write_goal(const TraceDir& trace, std::ostream& out, double units_per_second) {
  GoalSummary sum;
  std::vector<const RankTrace*> ranks;
  for (const auto& r : trace.ranks) ranks.push_back(r ? &*r : nullptr);
  const std::size_t P = ranks.size();
  const Timeline timeline(ranks);
  const Matching matching = match_messages(ranks);
  // Per rank and record: its matched message, or kNone.
  std::vector<std::vector<std::uint32_t>> msg_at(P), instance_at(P);
  for (std::size_t r = 0; r < P; ++r)
    if (ranks[r]) msg_at[r].assign(ranks[r]->events.size(), kNone), instance_at[r].assign(ranks[r]->events.size(), kNone);
  for (std::uint32_t m = 0; m < matching.messages.size(); ++m) {
    const Message& msg = matching.messages[m];
    msg_at[static_cast<std::size_t>(msg.src)][msg.send_event] = m;
    msg_at[static_cast<std::size_t>(msg.dst)][msg.post_event] = m;
    msg_at[static_cast<std::size_t>(msg.dst)][msg.recv_event] = m;
  }
  const auto calls = collective_instances(ranks);
  const std::vector<Instance> instances =
      instances_of(ranks, calls, instance_at, substitutes_of(trace.meta));

  // Where each rank starts: its MPI_Init exit, relative to the earliest.
  std::vector<std::size_t> first(P, 0);
  std::vector<double> start_s(P, 0.0);
  double zero = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < P; ++r) {
    if (!ranks[r] || ranks[r]->events.empty()) continue;
    const auto& ev = ranks[r]->events;
    std::uint64_t ticks = ev.front().t_enter;
    for (std::size_t i = 0; i < ev.size(); ++i)
      if (ev[i].op == Op::Init || ev[i].op == Op::Init_thread) {
        first[r] = i + 1;
        ticks = ev[i].t_exit;
        break;
      }
    start_s[r] = timeline.seconds(static_cast<int>(r), ticks);
    zero = std::min(zero, start_s[r]);
  }

  out << "num_ranks " << P << "\n";
  std::vector<CollOp> prog;
  std::vector<std::uint32_t> step_end;
  std::string buf;
  for (std::size_t r = 0; r < P; ++r) {
    buf = fmt::format("\nrank {} {{\n", r);
    const RankState state = r < trace.states.size() ? trace.states[r] : RankState::Missing;
    if (state != RankState::Complete) sum.cut_short.push_back(static_cast<int>(r));
    if (ranks[r] && !ranks[r]->events.empty()) {
      const RankTrace& t = *ranks[r];
      if (std::any_of(t.event_thread.begin(), t.event_thread.end(), [&](auto th) { return th != t.event_thread.front(); }))
        sum.multithreaded.push_back(static_cast<int>(r));
      const auto& ev = t.events;
      const int rank = static_cast<int>(r);
      auto ns = [&](std::uint64_t ticks) { return timeline.duration(rank, ticks) * units_per_second; };
      RankWriter w(buf, sum);
      w.compute((start_s[r] - zero) * units_per_second);
      std::uint64_t last_exit = first[r] > 0 ? ev[first[r] - 1].t_exit : ev.front().t_enter;
      auto gap = [&](std::uint64_t enter) { return enter > last_exit ? ns(enter - last_exit) : 0.0; };
      std::unordered_map<std::uint32_t, std::uint64_t> started;  // request -> its send/recv operation
      std::unordered_set<std::uint32_t> charged_icolls;  // nonblocking collectives written whole at their start
      std::size_t i = first[r];
      while (i < ev.size()) {
        const Event& e = ev[i];
        w.compute(gap(e.t_enter));
        if (e.op == Op::Finalize) break;
        std::size_t j = i + 1;
        while (j < ev.size() && (ev[j].continuation() || ev[j].op == Op::ToolFlush)) ++j;
        if (e.op == Op::ToolFlush) {  // mstep's own time: dropped
          last_exit = std::max(last_exit, e.t_exit);
          i = j;
          continue;
        }
        w.flush_compute();
        const std::uint32_t inst = instance_at[r][i];
        if (is_collective_call(e) && inst != kNone && instances[inst].usable) {
          const Instance& in = instances[inst];
          if (is_nonblocking_collective(e.op) && event_role(e) == Role::SendRecv && e.request)
            charged_icolls.insert(e.request);
          const auto me = static_cast<std::uint32_t>(in.members->rank_of(rank));
          const std::uint32_t cap = coll_max_ops(in.shape);
          prog.resize(cap);
          step_end.resize(cap);
          std::uint32_t nops = 0, nsteps = 0;
          coll_program(in.shape, me, prog.data(), step_end.data(), nops, nsteps);
          std::vector<std::uint64_t> step_ops;
          for (std::uint32_t s = 0, b = 0; s < nsteps; b = step_end[s++]) {
            step_ops.clear();
            for (std::uint32_t k = b; k < step_end[s]; ++k) {
              const CollOp& o = prog[k];
              const std::uint32_t tag = kCollectiveTags + (inst * 64u + o.slot / in.shape.n) % kCollectiveTags;
              const std::int32_t peer = (*in.members)[o.peer];
              step_ops.push_back(w.op(fmt::format("{} {}b {} {} tag {}", o.send ? "send" : "recv", o.bytes,
                                                  o.send ? "to" : "from", peer, tag),
                                      w.prev(), w.prev_nonblocking()));
              (o.send ? sum.sends : sum.recvs) += 1;
              sum.collective_messages += o.send ? 1 : 0;
            }
            w.join(step_ops);
          }
        } else {
          std::vector<std::uint64_t> done;  // what the call waits for
          bool modelled = false;
          // A nonblocking neighbourhood collective: its messages written at its start, as blocking.
          if (is_nonblocking_collective(e.op) && event_role(e) == Role::SendRecv && e.request)
            charged_icolls.insert(e.request);
          for (std::size_t k = i; k < j; ++k) {
            const Event& x = ev[k];
            if (x.op == Op::ToolFlush) continue;
            const Role xr = event_role(x);
            const std::uint32_t m = msg_at[r][k];
            const bool recv_half = x.flags & kRecvHalf;
            if (m != kNone && (xr == Role::Isend || xr == Role::Irecv)) {
              const Message& msg = matching.messages[m];
              const std::uint64_t o = xr == Role::Isend
                                          ? w.next(fmt::format("send {}b to {} tag {}", x.send_bytes, msg.dst, goal_tag(msg.tag)), true)
                                          : w.next(fmt::format("recv {}b from {} tag {}", msg.bytes, msg.src, goal_tag(msg.tag)), true);
              (xr == Role::Isend ? sum.sends : sum.recvs) += 1;
              if (x.request) started[x.request] = o;
              modelled = true;
            } else if (m != kNone && (xr == Role::Send || xr == Role::Recv || xr == Role::SendRecv)) {
              const Message& msg = matching.messages[m];
              const bool send = xr == Role::Send || (xr == Role::SendRecv && !recv_half);
              done.push_back(w.op(send ? fmt::format("send {}b to {} tag {}", x.send_bytes, msg.dst, goal_tag(msg.tag))
                                       : fmt::format("recv {}b from {} tag {}", msg.bytes, msg.src, goal_tag(msg.tag)),
                                  w.prev(), w.prev_nonblocking()));
              (send ? sum.sends : sum.recvs) += 1;
              modelled = true;
            } else if (xr == Role::Complete && (x.flags & kCollDone) && charged_icolls.erase(x.request)) {
              modelled = true;  // its collective was written whole at its start, as the replay charges it
            } else if (xr == Role::Complete && x.request && !(x.flags & kIncomplete)) {
              if (const auto it = started.find(x.request); it != started.end()) {
                done.push_back(it->second);
                started.erase(it);
                modelled = true;
              }
            }
          }
          if (!done.empty()) w.join(done);
          // Kept at its recorded duration, as the replay keeps it.
          if (!modelled && e.t_exit > e.t_enter) {
            w.compute(ns(e.t_exit - e.t_enter));
            w.flush_compute();
          }
        }
        for (std::size_t k = i; k < j; ++k) last_exit = std::max(last_exit, ev[k].t_exit);
        i = j;
      }
      w.flush_compute();
    }
    buf += "}\n";
    out << buf;
  }
  return sum;
}

}  // namespace mstep::model
