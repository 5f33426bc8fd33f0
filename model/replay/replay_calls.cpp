// The replay engine's loop over ready ranks and its point-to-point calls: a call's entry, the times it publishes to partners, and
// when each of its records completes under the cost model (replay_engine.hpp, MODELS.md section 3).
#include "model/replay/replay_engine.hpp"

namespace mstep::model::detail {

// Every rank as far as it goes; then, if the model deadlocked where the run did not, the
// earliest blocked call is resolved and the loop goes on.
template <class Cost>
void Engine<Cost>::run() {
  for (;;) {
    while (!ready_.empty()) {
      const std::uint32_t r = ready_.back();
      ready_.pop_back();
      advance(states_[r]);
    }
    // Nothing can move: either all ranks are done, or the model deadlocked where the run did
    // not. Resolve the earliest blocked call and go on.
    std::uint32_t pick = kNone;
    double earliest = 0;
    for (std::uint32_t r = 0; r < states_.size(); ++r) {
      const RankState& s = states_[r];
      if (!s.blocked) continue;
      const double when = s.mode == Mode::InColl ? s.step_start : s.entry;
      if (pick == kNone || when < earliest) pick = r, earliest = when;
    }
    if (pick == kNone) break;
    states_[pick].blocked = false;
    states_[pick].force = true;
    ready_.push_back(pick);
  }
  // The rest of every rank's records: read to the end for its recorded end and record count.
  for (std::uint32_t r = 0; r < states_.size(); ++r)
    if (states_[r].w)
      while (windows_[r].more()) load(r);
}

template <class Cost>
inline void Engine<Cost>::advance(RankState& s) {
  for (;;) {
    switch (s.mode) {
      case Mode::Done: return;
      case Mode::Between:
        if (!start_call(s)) return;
        break;
      case Mode::InCall:
        if (!complete_call(s)) return;
        break;
      case Mode::InColl:
        if (!run_collective(s)) return;
        break;
    }
  }
}

template <class Cost>
inline bool Engine<Cost>::start_call(RankState& s) {
  while (have(s, s.pos) && s.rec(s.pos).op == Op::ToolFlush) {  // the tool's time: dropped
    const Event& f = s.rec(s.pos);
    s.pending += s.gap(f.t_enter);
    s.last_exit = std::max(s.last_exit, f.t_exit);
    ++s.pos;
  }
  if (!have(s, s.pos)) {
    s.mode = Mode::Done;
    return false;
  }
  {
    const Event& e = s.rec(s.pos);
    s.entry = s.t + s.pending + s.gap(e.t_enter);
    s.pending = 0;
    s.call_op = e.op;
    if (e.op == Op::Finalize) {
      s.t = s.entry;
      told(s);
      s.mode = Mode::Done;
      return false;
    }
    const Role role = event_role(e);
    if (role == Role::CollRootOut || role == Role::CollRootIn || role == Role::CollAll) {
      const std::uint32_t p = s.pos++;
      s.last_exit = std::max(s.last_exit, e.t_exit);
      return start_collective(s, p);
    }
  }
  s.first = s.pos;
  s.last = s.pos + 1;
  while (have(s, s.last)) {
    const Event& next = s.rec(s.last);
    if (!next.continuation() && next.op != Op::ToolFlush) break;
    ++s.last;
  }
  for (std::uint32_t p = s.first; p < s.last; ++p) publish(s, s.rec(p), s.link(p));
  s.cursor = s.first;
  s.end = s.entry;
  s.mode = Mode::InCall;
  return true;
}

template <class Cost>
inline void Engine<Cost>::publish(RankState& s, const Event& e, std::uint32_t m) {
  if (m == kNone) return;
  const Role role = event_role(e);
  LiveMsg& g = linker_.msg(m);
  const bool recv_half = e.flags & kRecvHalf;
  const auto me = static_cast<std::size_t>(&s - states_.data());
  if (role == Role::Send || role == Role::Isend || (role == Role::SendRecv && !recv_half)) {
    g.ts = std::max(s.entry, s.last_ts + cost_.gap());
    s.last_ts = g.ts;
    if (cold_on_ && take_cold(me, e.peer, e.send_bytes)) g.machine |= kCold;
    wake(e.peer);  // the destination
  } else if (role == Role::Recv || role == Role::Irecv || (role == Role::SendRecv && recv_half) ||
             (role == Role::Complete && recv_half && g.tr == kUnknown)) {  // its Irecv was not recorded
    g.tr = s.entry;
    if (cold_on_ && take_fresh(me, g.bytes)) g.machine |= kFresh;
    wake(e.peer >= 0 ? e.peer : g.src);  // an Irecv from MPI_ANY_SOURCE
  }
}

template <class Cost>
inline bool Engine<Cost>::complete_call(RankState& s) {
  for (; s.cursor < s.last; ++s.cursor) {
    const Event& e = s.rec(s.cursor);
    const std::uint32_t m = s.link(s.cursor);
    if (e.op == Op::ToolFlush) {
      s.pending += s.gap(e.t_enter);
    } else {
      double done;
      if (!complete_record(s, e, m, done)) {
        s.blocked = true;
        return false;
      }
      s.end = std::max(s.end, done);
      if (m != kNone) retire(m);
    }
    s.last_exit = std::max(s.last_exit, e.t_exit);
  }
  s.t = s.end;
  told(s);
  s.pos = s.last;
  s.mode = Mode::Between;
  return true;
}

template <class Cost>
inline bool Engine<Cost>::complete_record(RankState& s, const Event& e, std::uint32_t m, double& done) {
  const Role role = event_role(e);
  const bool recv_half = e.flags & kRecvHalf;
  switch (role) {
    case Role::Recv: return complete_receive(s, e, m, done);
    case Role::SendRecv: return recv_half ? complete_receive(s, e, m, done) : complete_send(s, e, m, done);
    case Role::Send: return complete_send(s, e, m, done);
    case Role::Isend:
      done = m == kNone ? keep_recorded(s, e) : linker_.msg(m).ts + cost_.send_cpu(e.send_bytes) + cold_send(linker_.msg(m));
      return true;
    case Role::Irecv:
      done = m == kNone ? keep_recorded(s, e) : s.entry;
      return true;
    case Role::Complete:
      if (e.flags & kCollDone) {  // its collective was charged whole at its start ...
        const auto it = std::find(s.recorded_icolls.begin(), s.recorded_icolls.end(), e.request);
        if (it == s.recorded_icolls.end()) {
          done = s.entry;
          return true;
        }
        s.recorded_icolls.erase(it);  // ... or kept its recorded time, and so does this
        done = keep_recorded(s, e);
        return true;
      }
      if (m == kNone || (e.flags & kIncomplete)) {
        done = keep_recorded(s, e);
        return true;
      }
      return recv_half ? complete_receive(s, e, m, done) : complete_send(s, e, m, done);
    default: done = keep_recorded(s, e); return true;
  }
}

template <class Cost>
inline bool Engine<Cost>::complete_send(RankState& s, const Event& e, std::uint32_t m, double& done) {
  if (m == kNone) {
    done = keep_recorded(s, e);
    return true;
  }
  LiveMsg& g = linker_.msg(m);
  const bool blocking = event_role(e) != Role::Complete;
  // The Wait of an Isend carries no size: the message's.
  const std::uint64_t k = blocking ? e.send_bytes : g.bytes;
  if (!synchronous(g, k)) {
    done = blocking ? g.ts + cost_.send_cpu(k) + cold_send(g) : s.entry;
    return true;
  }
  if (g.tr == kUnknown) {
    bool unmatched = false;
    if (!forced(s, g, g.other, unmatched)) return false;
    done = unmatched ? keep_recorded(s, e) : std::max(s.entry, g.ts + cost_.send_cpu(k) + cold_send(g));  // as eager
    return true;
  }
  done = std::max(s.entry, cost_.rndv_sender_done(k, g.ts, g.tr) + fresh(g, k));
  g.sender_wait = static_cast<float>(std::max(0.0, g.tr - std::max(s.entry, cost_.rts_arrival(g.ts))));
  return true;
}

template <class Cost>
inline bool Engine<Cost>::complete_receive(RankState& s, const Event& e, std::uint32_t m, double& done) {
  if (m == kNone) {
    done = keep_recorded(s, e);
    return true;
  }
  LiveMsg& g = linker_.msg(m);
  if (g.ts == kUnknown) {
    bool unmatched = false;
    if (!forced(s, g, g.other, unmatched)) return false;
    done = unmatched ? keep_recorded(s, e) : s.entry + s.recorded(e);
    return true;
  }
  const double tc = s.entry;
  const double tr = g.tr == kUnknown ? tc : g.tr;
  const std::uint64_t k = e.recv_bytes;
  const bool sync = synchronous(g, k);
  const double data = (sync ? cost_.rndv_arrival(k, g.ts, tr) : cost_.eager_arrival(k, g.ts) + cold_send(g)) + fresh(g, k);
  done = std::max(tc, std::max(tr, data) + cost_.recv_cpu(k) + cold_recv(g));
  g.receiver_wait = static_cast<float>(std::max(0.0, (sync ? cost_.rts_arrival(g.ts) : data) - tc));
  return true;
}

#define MSTEP_MEMBERS(COST) \
  template void Engine<COST>::run(); \
  template void Engine<COST>::advance(RankState& s); \
  template bool Engine<COST>::start_call(RankState& s); \
  template void Engine<COST>::publish(RankState& s, const Event& e, std::uint32_t m); \
  template bool Engine<COST>::complete_call(RankState& s); \
  template bool Engine<COST>::complete_record(RankState& s, const Event& e, std::uint32_t m, double& done); \
  template bool Engine<COST>::complete_send(RankState& s, const Event& e, std::uint32_t m, double& done); \
  template bool Engine<COST>::complete_receive(RankState& s, const Event& e, std::uint32_t m, double& done);
MSTEP_REPLAY_INSTANTIATE(MSTEP_MEMBERS)

}  // namespace mstep::model::detail
