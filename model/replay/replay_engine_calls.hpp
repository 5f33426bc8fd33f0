// The replay engine (model/replay/replay_engine.hpp): the machine terms (cold start, fresh buffers,
// the rendezvous' progress) and the point-to-point calls, from a call's start to its completion.
#pragma once

#include <algorithm>

#include "model/replay/replay_engine.hpp"

namespace mstep::model::detail {
namespace {  // internal linkage: see replay_engine.hpp

template <class Cost>
inline void Engine<Cost>::wake(std::int32_t rank) {
  if (rank < 0) return;
  RankState& s = states_[static_cast<std::size_t>(rank)];
  if (s.blocked) {
    s.blocked = false;
    ready_.push_back(static_cast<std::uint32_t>(rank));
  }
}

// The cold start (model/params/cold_start.hpp): whether the next k-byte message from src to dst is
// still among the first of its pair, counted in the sender's order.
template <class Cost>
inline bool Engine<Cost>::take_cold(std::size_t src, std::int32_t dst, std::uint64_t k) {
  if (!cold_on_ || !cost_.cold().applies(k) || dst < 0) return false;
  const std::size_t P = states_.size();
  if (!pair_dense_.empty() && static_cast<std::size_t>(dst) < P)
    return ++pair_dense_[src * P + static_cast<std::size_t>(dst)] <= cost_.cold().messages;
  return take_cold_sparse((static_cast<std::uint64_t>(src) << 32) | static_cast<std::uint32_t>(dst));
}

// Fresh buffers: whether rank `dst` has received k bytes before.
template <class Cost>
inline bool Engine<Cost>::take_fresh(std::size_t dst, std::uint64_t k) {
  if (!cold_on_ || !cost_.cold().fresh_applies(k)) return false;
  if (seen_sizes_.empty()) seen_sizes_.resize(states_.size());
  std::vector<std::uint64_t>& seen = seen_sizes_[dst];
  const auto at = std::lower_bound(seen.begin(), seen.end(), k);
  if (at != seen.end() && *at == k) return false;
  seen.insert(at, k);
  return true;
}

// A message's last record is replayed: what it leaves behind, then it is freed.
template <class Cost>
void Engine<Cost>::forget_posted(const LiveMsg& m, std::uint32_t id) {
  auto forget = [&](std::int32_t r) {
    auto& posted = states_[static_cast<std::size_t>(r)].posted;
    posted.erase(std::remove_if(posted.begin(), posted.end(), [&](const auto& p) { return p.msg == id; }), posted.end());
  };
  if (m.tp == kUnknown && m.dst >= 0) forget(m.dst);
  if (push_on_ && m.tq == kUnknown && m.src >= 0 && m.src != m.dst) forget(m.src);
}

template <class Cost>
inline void Engine<Cost>::retire(std::uint32_t id) {
  if (!linker_.release_ref(id)) return;
  const LiveMsg& m = linker_.msg(id);
  // A rank that has not entered MPI since its Irecv or Isend of this message: forget it there.
  if (progress_on_ && ((m.tp == kUnknown && m.dst >= 0) || (push_on_ && m.tq == kUnknown && m.src >= 0))) [[unlikely]]
    forget_posted(m, id);
  if (m.matched()) {
    if (m.machine & kCold) {
      out_.machine_charges.push_back({m.src, m.send_event, cold_send(m)});
      out_.machine_charges.push_back({m.dst, m.recv_event, cold_recv(m)});
    }
    if (m.machine & kFresh) out_.machine_charges.push_back({m.dst, m.recv_event, fresh(m, m.bytes)});
    if (collect_waits_) message_waits_.push_back({m.src, m.send_event, m.sender_wait, m.receiver_wait});
  }
  linker_.free_msg(id);
}

template <class Cost>
void Engine<Cost>::progressed_posts(RankState& s, double t) {
  const auto me = static_cast<std::int32_t>(&s - states_.data());
  for (const RankState::Posted& p : s.posted) {
    LiveMsg& g = linker_.msg(p.msg);
    if (p.sent && g.src == me && g.send_event == p.event && g.tq == kUnknown) g.tq = t, wake(g.dst);
    if (!p.sent && g.dst == me && g.post_event == p.event && g.tp == kUnknown) g.tp = t, wake(g.src);
  }
  s.posted.clear();
}

// When the receiver answers the request-to-send of g: at its post if the request was there by
// then (or the receive was blocking), else at its first moment inside MPI after the request's
// arrival (its next call's entry: a receiver computing between Irecv and Wait answers at the
// Wait). False while that is not known yet.
template <class Cost>
inline bool Engine<Cost>::answered(const LiveMsg& g, double& tr) const {
  tr = g.tr;
  if (!cost_.progress_in_mpi() || g.tp == g.tr) return true;
  const double rts = cost_.rts_arrival(g.ts);
  if (rts <= g.tr) return true;
  if (g.tp == kUnknown) return false;
  tr = std::max(rts, g.tp);
  return true;
}

// A pushing rendezvous (LogGPSParams::rendezvous_push): how much later than the clear-to-send's
// return the data leaves, because the sender was computing then (answered at tr). False while the
// sender's next call after its Isend has not started.
template <class Cost>
inline bool Engine<Cost>::push_delay(const LiveMsg& g, double tr, double& delay) const {
  delay = 0;
  if (!cost_.push() || g.tq == g.ts) return true;
  if (g.tq == kUnknown) return false;
  delay = std::max(0.0, g.tq - cost_.cts_back(g.ts, tr));
  return true;
}

// The deadlock fallback: true once, if the rank was chosen to break a cycle. A partner whose
// records are all read and never met this message means it has none: not a deadlock.
template <class Cost>
inline bool Engine<Cost>::forced(RankState& s, const LiveMsg& m, std::int32_t partner, bool& unmatched) {
  if (!s.force) return false;
  s.force = false;
  unmatched = !m.matched() && (partner < 0 || !windows_[static_cast<std::size_t>(partner)].more());
  if (!unmatched) ++out_.model_deadlocks;
  return true;
}

template <class Cost>
inline bool Engine<Cost>::forced(RankState& s) {
  if (!s.force) return false;
  s.force = false;
  ++out_.model_deadlocks;
  return true;
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
      case Mode::CollWait:
        s.mode = Mode::Between;
        if (!start_collective(s, s.first)) return;
        break;
    }
  }
}

// Reads the next call: its computation gap, its entry, and publishes the times it gives
// partners (send starts, receive posts). False when the rank is done.
template <class Cost>
inline bool Engine<Cost>::start_call(RankState& s) {
  while (have(s, s.pos) && s.rec(s.pos).op == Op::ToolFlush) {  // the tool's time: dropped
    const Event& f = s.rec(s.pos);
    s.pending += s.gap(f.t_enter);
    s.last_exit = std::max(s.last_exit, f.t_exit);
    ++s.pos;
  }
  if (!have(s, s.pos)) {
    progressed(s, s.t);  // no call after: its posts are answered when it ends
    s.mode = Mode::Done;
    return false;
  }
  {
    const Event& e = s.rec(s.pos);
    s.entry = s.t + s.pending + s.gap(e.t_enter);
    s.pending = 0;
    s.call_op = e.op;
    progressed(s, s.entry);
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
  for (std::uint32_t p = s.first; p < s.last; ++p) publish(s, s.rec(p), s.link(p), s.at(p));
  // Found while the call's messages are all live (completing it retires them).
  if (run_.collective_times) [[unlikely]] {
    // An exchange's MPI_Waitall is isolated by the computation before its MPI_Irecv (s.t: the end
    // of the call before it).
    if (s.call_op == Op::Irecv) s.irecv_gap = s.entry - s.t;
    s.exchange_s = exchange_residual(s);
  }
  s.cursor = s.first;
  s.end = s.entry;
  s.busy = 0;
  s.mode = Mode::InCall;
  return true;
}

template <class Cost>
inline void Engine<Cost>::publish(RankState& s, const Event& e, std::uint32_t m, std::uint32_t event) {
  if (m == kNone) return;
  const Role role = event_role(e);
  LiveMsg& g = linker_.msg(m);
  const bool recv_half = e.flags & kRecvHalf;
  const auto me = static_cast<std::size_t>(&s - states_.data());
  if (role == Role::Send || role == Role::Isend || (role == Role::SendRecv && !recv_half)) {
    g.ts = std::max(s.entry, s.last_ts + cost_.gap());
    s.last_ts = g.ts;
    if (push_on_) {  // tq is read only by a pushing rendezvous
      if (role == Role::Isend) s.posted.push_back({m, event, true});
      else g.tq = g.ts;
    }
    if (cold_on_ && take_cold(me, e.peer, e.send_bytes)) g.machine |= kCold;
    wake(e.peer);  // the destination
  } else if (role == Role::Recv || role == Role::Irecv || (role == Role::SendRecv && recv_half) ||
             (role == Role::Complete && recv_half && g.tr == kUnknown)) {  // its Irecv was not recorded
    g.tr = s.entry;
    if (progress_on_) {  // tp is read only when the rendezvous progresses inside MPI only
      if (role == Role::Irecv) s.posted.push_back({m, event, false});
      else g.tp = g.tr;
    }
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
  if (run_.collective_times) [[unlikely]] s.end = std::max(s.end + s.exchange_s, s.entry);
  s.t = s.end;
  told(s);
  s.pos = s.last;
  s.mode = Mode::Between;
  return true;
}

// When the record's part of the call is done; false if that needs a time not known yet.
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

// A blocking send (entry = ts) or the Wait of an Isend (entry >= ts + T1).
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
    // A Sendrecv's (or neighbour collective's) receives come after its sends on the one CPU.
    if (event_role(e) == Role::SendRecv) s.busy = std::max(s.busy, done - s.entry);
    return true;
  }
  if (g.tr == kUnknown) {
    bool unmatched = false;
    if (!forced(s, g, g.other, unmatched)) return false;
    done = unmatched ? keep_recorded(s, e) : std::max(s.entry, g.ts + cost_.send_cpu(k) + cold_send(g));  // as eager
    return true;
  }
  double tr = g.tr, delay = 0;
  if (!answered(g, tr) && !forced(s)) return false;  // forced: as if answered at the post
  push_delay(g, tr, delay);  // this rank is in its Wait: its next call after the Isend has started
  done = std::max(s.entry, cost_.rndv_sender_done(k, g.ts, tr) + delay + fresh(g, k));
  g.sender_wait = static_cast<float>(std::max(0.0, tr - std::max(s.entry, cost_.rts_arrival(g.ts))));
  return true;
}

// Recv, Sendrecv's receive half, or the Wait/Test completing an Irecv: all at entry tc.
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
  double answer = tr, delay = 0;  // this rank is inside MPI now: its next call after an Irecv has started
  if (sync && g.tr != kUnknown && !answered(g, answer)) answer = std::max(tc, cost_.rts_arrival(g.ts));
  if (sync && !push_delay(g, answer, delay) && !forced(s)) return false;  // forced: as if it left at once
  const double data =
      (sync ? cost_.rndv_arrival(k, g.ts, answer) + delay : cost_.eager_arrival(k, g.ts) + cold_send(g)) + fresh(g, k);
  // T3 is the CPU's, inside this call: MPICH progresses only in MPI calls, so a Wait whose message
  // arrived while the rank computed still pays the receive (measured: tests/bench/sendrecv_early.c),
  // and one call's overheads are paid one after another (a Sendrecv's receive after its send).
  const double t3 = cost_.recv_cpu(k) + cold_recv(g);
  s.busy += t3;
  done = std::max(tc + s.busy, std::max(tr, data) + t3);
  g.receiver_wait = static_cast<float>(std::max(0.0, (sync ? cost_.rts_arrival(g.ts) : data) - tc));
  return true;
}
}  // namespace
}  // namespace mstep::model::detail
