// The replay engine's collectives: each member runs its program of point-to-point steps
// (replay_collectives.hpp), plus the calibrated residual of the operation (replay_engine.hpp).
#include "model/replay/replay_engine.hpp"

namespace mstep::model::detail {

template <class Cost>
bool Engine<Cost>::start_collective(RankState& s, std::uint32_t p) {
  const Event& e = s.rec(p);
  const std::uint32_t id = s.link(p);
  if (id == kNone) {
    s.t = keep_recorded(s, e);
    if (is_nonblocking_collective(e.op) && e.request) s.recorded_icolls.push_back(e.request);
    told(s);
    return true;
  }
  LiveInstance& inst = linker_.instance(id);
  if (!inst.bad && inst.registered < inst.shape.n) read_members_to(inst);
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

template <class Cost>
double Engine<Cost>::calibrated_residual(const CollShape& shape) const {
  if (!run_.collective_times || shape.substitute || shape.algo == CollAlgo::Unsupported || shape.algo == CollAlgo::Nothing)
    return 0;
  const auto it = run_.collective_times->find(blocking_collective(shape.op));
  if (it == run_.collective_times->end()) return 0;
  const CollShape two = choose_collective(shape.op, 2, 0, shape.m, CollectiveSubstitutes{});
  const std::uint32_t r2 = std::max<std::uint32_t>(coll_rounds(two), 1);
  return it->second.residual(shape.m) * static_cast<double>(coll_rounds(shape)) / static_cast<double>(r2);
}

template <class Cost>
void Engine<Cost>::read_members_to(LiveInstance& inst) {
  const auto k = static_cast<std::uint32_t>(inst.key & 0xffffffffu);
  for (const std::int32_t m : *inst.members) {
    const auto r = static_cast<std::uint32_t>(m);
    while (windows_[r].more() && linker_.collectives_read(r, inst.gcomm) <= k) load(r);
  }
}

template <class Cost>
void Engine<Cost>::begin_collective(RankState& s, const Event& e, std::uint32_t event, std::uint32_t id) {
  LiveInstance& inst = linker_.instance(id);
  const std::uint32_t me = run_.ranks[static_cast<std::size_t>(&s - states_.data())].crank_of[e.comm];
  if (inst.slots.empty()) {
    inst.rounds = coll_rounds(inst.shape);
    inst.residual = calibrated_residual(inst.shape);
    inst.slots.assign(static_cast<std::size_t>(inst.rounds) * inst.shape.n, Slot{});
    inst.arrival.assign(inst.shape.n, 0.0);
    inst.end.assign(inst.shape.n, 0.0);
    inst.event.assign(inst.shape.n, 0);
  }
  s.inst = id;
  s.me = me;
  inst.arrival[me] = s.entry;
  inst.event[me] = event;
  // The program is written into one scratch buffer sized for the largest communicator, then
  // kept in the rank's own buffers at its exact size: a rank's buffers grow to the largest
  // program it runs (log n for a barrier), never to n per rank for every rank (ranks squared).
  const std::uint32_t cap = coll_max_ops(std::max<std::uint32_t>(inst.shape.n, 1));
  if (scratch_ops_.size() < cap) scratch_ops_.resize(cap), scratch_steps_.resize(cap);
  std::uint32_t nops = 0;
  coll_program(inst.shape, me, scratch_ops_.data(), scratch_steps_.data(), nops, s.nsteps);
  if (s.prog.size() < nops) s.prog.resize(nops);
  if (s.steps.size() < s.nsteps) s.steps.resize(s.nsteps);
  std::copy_n(scratch_ops_.data(), nops, s.prog.data());
  std::copy_n(scratch_steps_.data(), s.nsteps, s.steps.data());
  s.step = 0;
  s.op = 0;
  s.step_open = false;
  s.end = s.entry;
  s.mode = Mode::InColl;
}

template <class Cost>
bool Engine<Cost>::run_collective(RankState& s) {
  LiveInstance& inst = linker_.instance(s.inst);
  Slot* slots = inst.slots.data();
  const std::int32_t* world = inst.members->data();
  const auto self = static_cast<std::size_t>(&s - states_.data());
  while (s.step < s.nsteps) {
    const std::uint32_t b = s.step ? s.steps[s.step - 1] : 0, end = s.steps[s.step];
    if (!s.step_open) {  // post the receives, then issue the sends one after the other
      s.step_start = s.end;
      double cpu = s.end;
      for (std::uint32_t i = b; i < end; ++i) {
        const CollOp& op = s.prog[i];
        if (op.send) continue;
        slots[op.slot].tr = s.step_start;
        slots[op.slot].fresh = take_fresh(self, op.bytes);
        if (slots[op.slot].fresh) charge(s, fresh(slots[op.slot], op.bytes));
        wake(world[op.peer]);
      }
      for (std::uint32_t i = b; i < end; ++i) {
        const CollOp& op = s.prog[i];
        if (!op.send) continue;
        const double ts = std::max(cpu, s.last_ts + cost_.gap());
        s.last_ts = ts;
        slots[op.slot].ts = ts;
        slots[op.slot].cold = take_cold(self, world[op.peer], op.bytes);
        cpu = ts + cost_.send_cpu(op.bytes) + cold_send(slots[op.slot]);
        if (slots[op.slot].cold) charge(s, cold_send(slots[op.slot]));
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
        s.step_end = std::max(s.step_end, cost_.rndv_sender_done(op.bytes, sl.ts, sl.tr) + fresh(sl, op.bytes));
      } else {
        double data;
        if (sl.ts == kUnknown) {
          if (!forced(s)) return block(s);
          data = cost_.eager_arrival(op.bytes, s.step_start);  // as if sent when posted
        } else {
          data = (rv ? cost_.rndv_arrival(op.bytes, sl.ts, sl.tr) : cost_.eager_arrival(op.bytes, sl.ts) + cold_send(sl)) +
                 fresh(sl, op.bytes);
        }
        s.step_end = std::max(s.step_end, std::max(s.step_start, data) + cost_.recv_cpu(op.bytes) + cold_recv(sl));
        if (sl.cold) charge(s, cold_recv(sl));
      }
    }
    s.end = s.step_end;
    ++s.step;
    s.step_open = false;
  }
  // The calibrated residual: what MPICH's collective costs beyond its messages. A negative one
  // (back-to-back transfers overlap more than the messages' sum) never ends a call before its entry.
  if (inst.residual != 0) s.end = std::max(s.end + inst.residual, s.entry);
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

#define MSTEP_MEMBERS(COST) \
  template bool Engine<COST>::start_collective(RankState& s, std::uint32_t p); \
  template double Engine<COST>::calibrated_residual(const CollShape& shape) const; \
  template void Engine<COST>::read_members_to(LiveInstance& inst); \
  template void Engine<COST>::begin_collective(RankState& s, const Event& e, std::uint32_t event, std::uint32_t id); \
  template bool Engine<COST>::run_collective(RankState& s);
MSTEP_REPLAY_INSTANTIATE(MSTEP_MEMBERS)

}  // namespace mstep::model::detail
