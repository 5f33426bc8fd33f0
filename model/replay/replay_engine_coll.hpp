// The replay engine (model/replay/replay_engine.hpp): collectives. Each member runs its program of
// point-to-point steps (model/replay/replay_collectives.hpp) over the instance's slots.
#pragma once

#include <algorithm>

#include "model/replay/replay_engine.hpp"

namespace mstep::model::detail {
namespace {  // internal linkage: see replay_engine.hpp

// The collective record at position p: its instance once every member has read it.
template <class Cost>
inline bool Engine<Cost>::start_collective(RankState& s, std::uint32_t p) {
  const Event& e = s.rec(p);
  const std::uint32_t id = s.link(p);
  if (id == kNone) {
    s.t = keep_recorded(s, e);
    if (is_nonblocking_collective(e.op) && e.request) s.recorded_icolls.push_back(e.request);
    told(s);
    return true;
  }
  LiveInstance& inst = linker_.instance(id);
  if (!inst.bad && inst.registered < inst.shape.n) {
    // Reading every member ahead to its record of this instance held whole traces in memory
    // (a barrier after a long stretch of point-to-point calls, 16 384 ranks: 145 MB of records).
    // Each member registers its record as its own window reaches it; wait for that, unless
    // nothing else can run (wake_collective_waiters).
    if (!s.read_members) {
      s.first = p;
      s.mode = Mode::CollWait;
      if (!s.listed_waiting) {
        s.listed_waiting = true;
        inst.waiting.push_back(static_cast<std::uint32_t>(&s - states_.data()));
      }
      return block(s);
    }
    read_members_to(inst);
  }
  s.read_members = false;
  s.listed_waiting = false;
  if (!inst.waiting.empty()) {  // members that entered it before its last record was read
    for (const std::uint32_t w : inst.waiting) wake(static_cast<std::int32_t>(w));
    inst.waiting.clear();
  }
  const bool usable = !inst.bad && inst.shape.n > 0 && inst.registered == inst.shape.n &&
                      inst.shape.algo != CollAlgo::Unsupported;
  if (!usable) {
    const Event& again = s.rec(p);  // reading other ranks leaves this window as it was
    s.t = keep_recorded(s, again);
    if (is_nonblocking_collective(again.op) && again.request) s.recorded_icolls.push_back(again.request);
    told(s);
    ++unusable_collectives_;
    if (!inst.bad && inst.shape.substitute && inst.shape.algo == CollAlgo::Unsupported) ++recorded_substitutes_;
    else if (!inst.bad && inst.shape.n > 0 && inst.registered == inst.shape.n &&
             inst.shape.algo == CollAlgo::Unsupported)
      ++undecomposed_collectives_;
    if (++inst.finished == inst.registered) linker_.free_instance(id);
    return true;
  }
  if (is_nonblocking_collective(s.rec(p).op)) ++nonblocking_collectives_;
  begin_collective(s, s.rec(p), s.at(p), id);
  return true;
}

// What `mstep calibrate` measured an exchange with one partner (both ways at once) to cost beyond
// the replay's charge for it, at the call's size, for the call `s` starts if it is one whose two
// messages the replay matched; 0 otherwise. Two kinds, each calibrated on its own: MPI_Sendrecv
// with one partner, and an MPI_Waitall completing an MPI_Irecv and an MPI_Isend with one partner
// posted by the two calls just before it (the residual of the three calls, added to the Waitall).
// Each by the computation before it, as a collective's (back to back, isolated, or between:
// CollectiveTimes::residual_after): the Sendrecv's own, the Waitall's before its MPI_Irecv.
// Out of line and cold: inlined into the call's path, the Sendrecv check cost a 64-rank
// ping-pong 4% more instructions in calls that are no exchange (callgrind).
template <class Cost>
double Engine<Cost>::exchange_residual(const RankState& s) {
  if (s.last - s.first != 2 || s.link(s.first) == kNone || s.link(s.first + 1) == kNone) return 0;
  const Op op = s.call_op == Op::Sendrecv_replace ? Op::Sendrecv : s.call_op;
  if (op != Op::Sendrecv && op != Op::Waitall) return 0;
  const auto it = run_.collective_times->find(op);
  if (it == run_.collective_times->end()) return 0;
  const Event& a = s.rec(s.first);
  const Event& b = s.rec(s.first + 1);
  if (op == Op::Sendrecv) {
    if (a.peer < 0 || b.peer != a.peer || !(b.flags & kRecvHalf)) return 0;
    return it->second.residual_after(std::max(a.send_bytes, b.recv_bytes), s.entry - s.t);  // s.t: the last call's end
  }
  // The Waitall: one record completes the receive (its peer the source), the other the send
  // (whose record names no peer: the message does).
  const bool a_recv = a.flags & kRecvHalf;
  if (a_recv == static_cast<bool>(b.flags & kRecvHalf)) return 0;
  const Event& in = a_recv ? a : b;
  const LiveMsg& got = linker_.msg(s.link(a_recv ? s.first : s.first + 1));
  const LiveMsg& sent = linker_.msg(s.link(a_recv ? s.first + 1 : s.first));
  const std::int32_t to = sent.dst >= 0 ? sent.dst : sent.other;
  if (in.peer < 0 || to != in.peer) return 0;
  const std::uint32_t w = s.at(s.first);  // the Waitall's first record, in the rank's file order
  if (w < 2 || std::min(got.post_event, sent.send_event) != w - 2 || std::max(got.post_event, sent.send_event) != w - 1)
    return 0;
  return it->second.residual_after(std::max(sent.bytes, in.recv_bytes), s.irecv_gap);
}

// The residual of the instance's operation at its block size, per round of its algorithm relative
// to the same operation's at 2 ranks (where it was measured): MPICH's, or libmstep's substitute's
// where one ran (measured at 2 ranks as MPICH's choice, whose messages there are MPICH's; 0 for a
// parameter file without them); back to back and, where calibrated, isolated.
template <class Cost>
inline void Engine<Cost>::set_calibrated_residual(LiveInstance& inst) const {
  const CollShape& shape = inst.shape;
  if (!run_.collective_times || shape.algo == CollAlgo::Unsupported || shape.algo == CollAlgo::Nothing) return;
  const auto it = run_.collective_times->find(blocking_collective(shape.op));
  if (it == run_.collective_times->end()) return;
  const CollShape two = choose_collective(shape.op, 2, 0, shape.m, CollectiveSubstitutes{});
  const std::uint32_t r2 = std::max<std::uint32_t>(coll_rounds(two), 1);
  const auto rounds = static_cast<double>(coll_rounds(shape));
  const CollectiveTimes& t = it->second;
  inst.residual = (shape.substitute ? t.substitute_residual(shape.m) : t.residual(shape.m)) * rounds / static_cast<double>(r2);
  if (shape.substitute ? t.has_substitute_isolated() : t.has_isolated()) {
    inst.isolated_gap_s = t.isolated_gap_s;
    inst.residual_isolated = (shape.substitute ? t.substitute_residual_after(shape.m, t.isolated_gap_s)
                                               : t.residual_after(shape.m, t.isolated_gap_s)) *
                             rounds / static_cast<double>(r2);
  }
}

// Reads ahead in the members that have not read their record of this instance yet, until they
// have or their records end.
template <class Cost>
inline void Engine<Cost>::read_members_to(LiveInstance& inst) {
  const auto k = static_cast<std::uint32_t>(inst.key & 0xffffffffu);
  for (const std::int32_t m : *inst.members) {
    const auto r = static_cast<std::uint32_t>(m);
    while (windows_[r].more() && linker_.collectives_read(r, inst.gcomm) <= k) load(r);
  }
}

// `event`: the collective record's index in the rank's records (file order).
template <class Cost>
inline void Engine<Cost>::begin_collective(RankState& s, const Event& e, std::uint32_t event, std::uint32_t id) {
  LiveInstance& inst = linker_.instance(id);
  const std::uint32_t me = run_.ranks[static_cast<std::size_t>(&s - states_.data())].crank_of[e.comm];
  if (inst.slots.empty()) {
    inst.rounds = coll_rounds(inst.shape);
    set_calibrated_residual(inst);
    inst.slots.assign(static_cast<std::size_t>(inst.rounds) * inst.shape.n, Slot{});
    if (cold_on_) inst.machine.assign(inst.slots.size(), 0);
    inst.arrival.assign(inst.shape.n, 0.0);
    inst.end.assign(inst.shape.n, 0.0);
    inst.event.assign(inst.shape.n, 0);
  }
  s.inst = id;
  s.me = me;
  inst.arrival[me] = s.entry;
  inst.event[me] = event;
  s.step = 0;
  s.op = 0;
  s.step_open = false;
  s.end = s.entry;
  s.mode = Mode::InColl;
  // A barrier's steps are written as the member starts each (barrier_dissemination_step): at the
  // end of a run every rank is in the world's barrier at once.
  s.step_at_a_time = inst.shape.algo == CollAlgo::BarrierDissemination;
  if (s.step_at_a_time) {
    s.nsteps = barrier_dissemination_rounds(inst.shape.n);
    if (s.prog.size() < 2) s.prog.resize(2);
    return;
  }
  // The program is written into one scratch buffer sized for the largest communicator, then
  // kept in the rank's own buffers at its exact size: a rank's buffers grow to the largest
  // program it runs, never to n per rank for every rank (ranks squared).
  const std::uint32_t cap = coll_max_ops(inst.shape);
  if (scratch_ops_.size() < cap) scratch_ops_.resize(cap), scratch_steps_.resize(cap);
  std::uint32_t nops = 0;
  coll_program(inst.shape, me, scratch_ops_.data(), scratch_steps_.data(), nops, s.nsteps);
  if (s.prog.size() < nops) s.prog.resize(nops);
  if (s.steps.size() < s.nsteps) s.steps.resize(s.nsteps);
  std::copy_n(scratch_ops_.data(), nops, s.prog.data());
  std::copy_n(scratch_steps_.data(), s.nsteps, s.steps.data());
}

template <class Cost>
inline bool Engine<Cost>::run_collective(RankState& s) {
  LiveInstance& inst = linker_.instance(s.inst);
  Slot* slots = inst.slots.data();
  std::uint8_t* machine = inst.machine.empty() ? nullptr : inst.machine.data();
  const std::int32_t* world = inst.members->data();
  const auto self = static_cast<std::size_t>(&s - states_.data());
  while (s.step < s.nsteps) {
    const std::uint32_t b = s.step_at_a_time ? 0 : s.step ? s.steps[s.step - 1] : 0;
    const std::uint32_t end = s.step_at_a_time ? 2 : s.steps[s.step];
    if (!s.step_open) {  // post the receives, then issue the sends one after the other
      if (s.step_at_a_time) barrier_dissemination_step(inst.shape.n, s.me, s.step, s.prog.data());
      s.step_start = s.end;
      double cpu = s.end;
      for (std::uint32_t i = b; i < end; ++i) {
        const CollOp& op = s.prog[i];
        if (op.send) continue;
        slots[op.slot].tr = s.step_start;
        if (machine && take_fresh(self, op.bytes)) {  // machine: the terms are on
          machine[op.slot] |= kFresh;
          charge(s, fresh(machine, op.slot, op.bytes));
        }
        wake(world[op.peer]);
      }
      for (std::uint32_t i = b; i < end; ++i) {
        const CollOp& op = s.prog[i];
        if (!op.send) continue;
        const double ts = std::max(cpu, s.last_ts + cost_.gap());
        s.last_ts = ts;
        slots[op.slot].ts = ts;
        const bool cold = machine && take_cold(self, world[op.peer], op.bytes);
        if (cold) machine[op.slot] |= kCold;
        cpu = ts + cost_.send_cpu(op.bytes) + cold_send(machine, op.slot);
        if (cold) charge(s, cold_send(machine, op.slot));
        wake(world[op.peer]);
      }
      s.step_end = cpu;
      s.op = b;
      s.step_open = true;
    }
    for (; s.op < end; ++s.op) {
      const CollOp& op = s.prog[s.op];
      const Slot& sl = slots[op.slot];
      const bool rv = cost_.rendezvous(op.bytes);
      if (op.send) {
        if (!rv) continue;
        if (sl.tr == kUnknown) {
          if (!forced(s)) return block(s);
          continue;  // resolved as eager
        }
        s.step_end = std::max(s.step_end, cost_.rndv_sender_done(op.bytes, sl.ts, sl.tr) + fresh(machine, op.slot, op.bytes));
      } else {
        double data;
        if (sl.ts == kUnknown) {
          if (!forced(s)) return block(s);
          data = cost_.eager_arrival(op.bytes, s.step_start);  // as if sent when posted
        } else {
          data = (rv ? cost_.rndv_arrival(op.bytes, sl.ts, sl.tr) : cost_.eager_arrival(op.bytes, sl.ts) + cold_send(machine, op.slot)) +
                 fresh(machine, op.slot, op.bytes);
        }
        s.step_end = std::max(s.step_end, std::max(s.step_start, data) + cost_.recv_cpu(op.bytes) + cold_recv(machine, op.slot));
        if (machine && (machine[op.slot] & kCold)) charge(s, cold_recv(machine, op.slot));
      }
    }
    s.end = s.step_end;
    ++s.step;
    s.step_open = false;
  }
  // The calibrated residual: what MPICH's collective costs beyond its messages, as measured back to
  // back or, by the member's computation before its call (s.t is still its previous call's end),
  // isolated. A negative one (back-to-back transfers overlap more than the messages' sum) never
  // ends a call before its entry.
  const double residual = inst.isolated_gap_s > 0 ? residual_for_gap(inst.residual, inst.residual_isolated, s.entry - s.t,
                                                                      inst.isolated_gap_s)
                                                   : inst.residual;
  if (residual != 0) s.end = std::max(s.end + residual, s.entry);
  inst.end[s.me] = s.end;
  s.t = s.end;
  told(s);
  if (++inst.finished == inst.shape.n) {
    uses_.add(inst, out_);
    linker_.free_instance(s.inst);
  }
  s.inst = kNone;
  s.mode = Mode::Between;
  return true;
}

// Ranks still waiting in a collective for its members' records: made ready to read them ahead.
// False when there were none. A look over every rank, as the deadlock fallback after it takes.
template <class Cost>
inline bool Engine<Cost>::wake_collective_waiters() {
  bool any = false;
  for (std::uint32_t r = 0; r < states_.size(); ++r) {
    RankState& s = states_[r];
    if (!s.blocked || s.mode != Mode::CollWait) continue;
    s.blocked = false;
    s.read_members = true;
    ready_.push_back(r);
    any = true;
  }
  return any;
}
}  // namespace
}  // namespace mstep::model::detail
