// The replay loop (semantics in model/replay/replay.hpp). Ranks advance through their records as far as
// the times they depend on are known; a rank that needs a partner's time not known yet (a send
// start for a receive, a receive post for a rendezvous send) stops, and the partner wakes it when
// it publishes that time. No heap allocation and no virtual call per record: the cost model is a
// template parameter, and every array is sized before the loop (collective slot storage is
// recycled between instances).
#include <algorithm>
#include <array>
#include <unordered_map>

#include <fmt/format.h>

#include "model/replay/replay_costs.hpp"
#include "model/replay/replay_plan.hpp"

namespace mstep::model {
namespace {

using detail::kNone;
using detail::LinearModelCost;
using detail::LogGPSCost;
using detail::kUnknown;
using detail::PlanInstance;
using detail::PlanMsg;
using detail::PlanRank;
using detail::ReplayPlan;

constexpr std::array<Role, kOpCount> kRoles = {
#define MSTEP_OP(name, role) Role::role,
#include "format/ops.def"
#undef MSTEP_OP
};
inline Role role_of(Op op) { return kRoles[static_cast<std::size_t>(op)]; }

// ---- The loop ------------------------------------------------------------------------------

struct Slot {
  double ts = kUnknown;
  double tr = kUnknown;
  bool cold = false;   // among the first messages of its pair (ColdStart)
  bool fresh = false;  // a size its receiver has not received before (ColdStart)
};

enum class Mode : std::uint8_t { Between, InCall, InColl, Done };

struct RankState {
  const Event* ev = nullptr;
  const std::uint32_t* link = nullptr;
  const std::uint32_t* order = nullptr;  // null: records in file order
  std::uint32_t n = 0;
  std::uint32_t pos = 0;                 // next position to start a call at
  std::uint32_t first = 0, last = 0;     // the current call's records [first, last)
  std::uint32_t cursor = 0;              // the record being completed
  Mode mode = Mode::Done;
  bool blocked = false;
  bool force = false;                    // deadlock fallback: resolve the next unknown time
  double t = 0;                          // end of the last completed call
  double entry = 0;                      // entry of the current call
  double end = 0;                        // completion of the current call so far
  double pending = 0;                    // computation seen between records of one call
  double last_ts = -1e300;               // start of the rank's last send (for g)
  double spt = 1e-9;
  std::uint64_t last_exit = 0;
  // The collective in progress.
  std::uint32_t inst = kNone;
  std::uint64_t member = 0;
  std::uint32_t step = 0, nsteps = 0, op = 0;
  bool step_open = false;
  double step_start = 0, step_end = 0;
  CollOp* prog = nullptr;
  std::uint32_t* steps = nullptr;

  std::uint32_t at(std::uint32_t p) const { return order ? order[p] : p; }
  double gap(std::uint64_t t_enter) const {
    return t_enter > last_exit ? static_cast<double>(t_enter - last_exit) * spt : 0.0;
  }
  double recorded(const Event& e) const {
    return e.t_exit > e.t_enter ? static_cast<double>(e.t_exit - e.t_enter) * spt : 0.0;
  }
};

template <class Cost>
class Engine {
 public:
  Engine(ReplayPlan& plan, const Cost& cost, ReplayResult& out) : plan_(plan), cost_(cost), out_(out) {
    const std::size_t P = plan.ranks.size();
    states_.resize(P);
    ready_.reserve(P);
    progs_.resize(P);
    steps_.resize(P);
    finish_.assign(P, 0.0);
    arrival_.assign(plan.members_total, 0.0);
    coll_end_.assign(plan.members_total, 0.0);
    coll_event_.assign(plan.members_total, 0);
    cold_on_ = cost.cold().any();
    if (cold_on_) msg_cold_.assign(plan.msgs.size(), 0);
    // Pair counts in a dense matrix up to 2048 ranks (16 MiB): a hash lookup per eager message
    // costs the replay ~15% of its speed.
    if (cold_on_ && cost.cold().messages > 0 && P <= 2048) pair_dense_.assign(P * P, 0);
    for (std::size_t r = 0; r < P; ++r) {
      const PlanRank& pr = plan.ranks[r];
      RankState& s = states_[r];
      if (!pr.present) continue;
      s.ev = pr.ev;
      s.link = pr.link.data();
      s.order = pr.order.empty() ? nullptr : pr.order.data();
      s.n = pr.n;
      s.pos = pr.start_pos;
      s.t = pr.start_s;
      s.spt = pr.spt;
      s.last_exit = pr.start_ticks;
      s.mode = Mode::Between;
      ready_.push_back(static_cast<std::uint32_t>(r));
    }
  }

  void run() {
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
    for (std::size_t r = 0; r < states_.size(); ++r) finish_[r] = states_[r].t;
  }

  std::vector<double> finish_, arrival_, coll_end_;
  std::vector<std::uint32_t> coll_event_;
  bool cold_on_ = false;                // the cost model has a cold start (ColdStart::any)
  std::vector<std::uint8_t> msg_cold_;  // per matched message (kCold, kFresh), with a cold start only
  std::unordered_map<std::uint64_t, std::uint32_t> pair_sent_;  // beyond 2048 ranks
  std::vector<std::uint32_t> pair_dense_;                       // [src * P + dst], up to 2048 ranks
  // Per receiving rank, the sizes it has received before, sorted: programs use few sizes, so a
  // binary search beats hashing, and a new size (an insert) is rare.
  std::vector<std::vector<std::uint64_t>> seen_sizes_;

 private:
  void wake(std::int32_t rank) {
    RankState& s = states_[static_cast<std::size_t>(rank)];
    if (s.blocked) {
      s.blocked = false;
      ready_.push_back(static_cast<std::uint32_t>(rank));
      // Its records are cold by now (the other ranks ran): fetch the next ones while we finish.
      if (s.mode == Mode::InCall && s.last < s.n) {
        const Event* next = s.ev + s.at(s.last);
        __builtin_prefetch(next);
        __builtin_prefetch(reinterpret_cast<const char*>(next) + 64);
        __builtin_prefetch(s.link + s.at(s.last));
      }
    }
  }
  // The cold start (model/params/cold_start.hpp): whether the next k-byte message from src to dst is
  // still among the first of its pair, counted in the sender's order.
  bool take_cold(std::size_t src, std::int32_t dst, std::uint64_t k) {
    if (!cold_on_ || !cost_.cold().applies(k) || dst < 0) return false;
    const std::size_t P = states_.size();
    if (!pair_dense_.empty() && static_cast<std::size_t>(dst) < P)
      return ++pair_dense_[src * P + static_cast<std::size_t>(dst)] <= cost_.cold().messages;
    const std::uint64_t key = (static_cast<std::uint64_t>(src) << 32) | static_cast<std::uint32_t>(dst);
    return ++pair_sent_[key] <= cost_.cold().messages;
  }
  // Fresh buffers: whether rank `dst` has received k bytes before.
  bool take_fresh(std::size_t dst, std::uint64_t k) {
    if (!cold_on_ || !cost_.cold().fresh_applies(k)) return false;
    if (seen_sizes_.empty()) seen_sizes_.resize(states_.size());
    std::vector<std::uint64_t>& seen = seen_sizes_[dst];
    const auto at = std::lower_bound(seen.begin(), seen.end(), k);
    if (at != seen.end() && *at == k) return false;
    seen.insert(at, k);
    return true;
  }
  static constexpr std::uint8_t kCold = 1, kFresh = 2;
  double cold_send(std::uint32_t m) const { return !msg_cold_.empty() && (msg_cold_[m] & kCold) ? cost_.cold().send : 0.0; }
  double cold_recv(std::uint32_t m) const { return !msg_cold_.empty() && (msg_cold_[m] & kCold) ? cost_.cold().recv : 0.0; }
  double cold_send(const Slot& sl) const { return sl.cold ? cost_.cold().send : 0.0; }
  double cold_recv(const Slot& sl) const { return sl.cold ? cost_.cold().recv : 0.0; }
  double fresh(std::uint32_t m, std::uint64_t k) const {
    return !msg_cold_.empty() && (msg_cold_[m] & kFresh) ? cost_.cold().fresh_per_byte * static_cast<double>(k) : 0.0;
  }
  double fresh(const Slot& sl, std::uint64_t k) const {
    return sl.fresh ? cost_.cold().fresh_per_byte * static_cast<double>(k) : 0.0;
  }

  // A machine term paid by rank s in the collective it is in.
  void charge(const RankState& s, double seconds) {
    out_.machine_charges.push_back(
        {static_cast<std::int32_t>(&s - states_.data()), coll_event_[s.member], seconds});
  }

 public:
  // The point-to-point messages' machine terms, from the flags the run left (after run()).
  void charge_messages() {
    for (std::uint32_t m = 0; m < msg_cold_.size(); ++m) {
      if (!msg_cold_[m]) continue;
      const Message& msg = plan_.messages[m];
      if (msg_cold_[m] & kCold) {
        out_.machine_charges.push_back({msg.src, msg.send_event, cold_send(m)});
        out_.machine_charges.push_back({msg.dst, msg.recv_event, cold_recv(m)});
      }
      if (msg_cold_[m] & kFresh) out_.machine_charges.push_back({msg.dst, msg.recv_event, fresh(m, msg.bytes)});
    }
  }

 private:
  bool synchronous(std::uint32_t m, std::uint64_t bytes) const {
    const std::uint8_t mode = plan_.msg_mode[m];
    if (mode == detail::kSynchronous) return Cost::kSynchronousSends;
    if (mode == detail::kBuffered) return false;
    return cost_.rendezvous(bytes);
  }
  // The deadlock fallback: true once, if the rank was chosen to break a cycle.
  bool forced(RankState& s) {
    if (!s.force) return false;
    s.force = false;
    ++out_.model_deadlocks;
    return true;
  }
  double keep_recorded(const RankState& s, const Event& e) {
    ++out_.recorded_calls;
    return s.entry + s.recorded(e);
  }

  void advance(RankState& s) {
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

  // Reads the next call: its computation gap, its entry, and publishes the times it gives
  // partners (send starts, receive posts). False when the rank is done.
  bool start_call(RankState& s) {
    while (s.pos < s.n && s.ev[s.at(s.pos)].op == Op::ToolFlush) {  // the tool's time: dropped
      const Event& f = s.ev[s.at(s.pos)];
      s.pending += s.gap(f.t_enter);
      s.last_exit = std::max(s.last_exit, f.t_exit);
      ++s.pos;
    }
    if (s.pos >= s.n) {
      s.mode = Mode::Done;
      return false;
    }
    const std::uint32_t idx = s.at(s.pos);
    const Event& e = s.ev[idx];
    s.entry = s.t + s.pending + s.gap(e.t_enter);
    s.pending = 0;
    if (e.op == Op::Finalize) {
      s.t = s.entry;
      s.mode = Mode::Done;
      return false;
    }
    const Role role = role_of(e.op);
    if (role == Role::CollRootOut || role == Role::CollRootIn || role == Role::CollAll) {
      s.last_exit = std::max(s.last_exit, e.t_exit);
      ++s.pos;
      const std::uint32_t id = s.link[idx];
      if (id == kNone || !plan_.instances[id].usable) {
        s.t = keep_recorded(s, e);
        return true;
      }
      begin_collective(s, e, idx, id);
      return true;
    }
    s.first = s.pos;
    s.last = s.pos + 1;
    while (s.last < s.n) {
      const Event& next = s.ev[s.at(s.last)];
      if (!next.continuation() && next.op != Op::ToolFlush) break;
      ++s.last;
    }
    for (std::uint32_t p = s.first; p < s.last; ++p) publish(s, s.ev[s.at(p)], s.link[s.at(p)]);
    s.cursor = s.first;
    s.end = s.entry;
    s.mode = Mode::InCall;
    return true;
  }

  void publish(RankState& s, const Event& e, std::uint32_t m) {
    if (m == kNone) return;
    const Role role = role_of(e.op);
    PlanMsg& g = plan_.msgs[m];
    const bool recv_half = e.flags & kRecvHalf;
    if (role == Role::Send || role == Role::Isend || (role == Role::SendRecv && !recv_half)) {
      g.ts = std::max(s.entry, s.last_ts + cost_.gap());
      s.last_ts = g.ts;
      if (!msg_cold_.empty() && take_cold(static_cast<std::size_t>(&s - states_.data()), e.peer, e.send_bytes))
        msg_cold_[m] |= kCold;
      wake(e.peer);  // the destination
    } else if (role == Role::Recv || role == Role::Irecv || (role == Role::SendRecv && recv_half) ||
               (role == Role::Complete && recv_half && g.tr == kUnknown)) {  // its Irecv was not recorded
      g.tr = s.entry;
      if (!msg_cold_.empty() && take_fresh(static_cast<std::size_t>(&s - states_.data()), plan_.messages[m].bytes))
        msg_cold_[m] |= kFresh;
      wake(e.peer >= 0 ? e.peer : plan_.messages[m].src);  // an Irecv from MPI_ANY_SOURCE
    }
  }

  bool complete_call(RankState& s) {
    for (; s.cursor < s.last; ++s.cursor) {
      const std::uint32_t idx = s.at(s.cursor);
      const Event& e = s.ev[idx];
      if (e.op == Op::ToolFlush) {
        s.pending += s.gap(e.t_enter);
      } else {
        double done;
        if (!complete_record(s, e, s.link[idx], done)) {
          s.blocked = true;
          return false;
        }
        s.end = std::max(s.end, done);
      }
      s.last_exit = std::max(s.last_exit, e.t_exit);
    }
    s.t = s.end;
    s.pos = s.last;
    s.mode = Mode::Between;
    return true;
  }

  // When the record's part of the call is done; false if that needs a time not known yet.
  bool complete_record(RankState& s, const Event& e, std::uint32_t m, double& done) {
    const Role role = role_of(e.op);
    const bool recv_half = e.flags & kRecvHalf;
    switch (role) {
      case Role::Recv: return complete_receive(s, e, m, done);
      case Role::SendRecv: return recv_half ? complete_receive(s, e, m, done) : complete_send(s, e, m, done);
      case Role::Send: return complete_send(s, e, m, done);
      case Role::Isend:
        done = m == kNone ? keep_recorded(s, e) : plan_.msgs[m].ts + cost_.send_cpu(e.send_bytes) + cold_send(m);
        return true;
      case Role::Irecv:
        done = m == kNone ? keep_recorded(s, e) : s.entry;
        return true;
      case Role::Complete:
        if (m == kNone || (e.flags & kIncomplete)) {
          done = keep_recorded(s, e);
          return true;
        }
        return recv_half ? complete_receive(s, e, m, done) : complete_send(s, e, m, done);
      default: done = keep_recorded(s, e); return true;
    }
  }

  // A blocking send (entry = ts) or the Wait of an Isend (entry >= ts + T1).
  bool complete_send(RankState& s, const Event& e, std::uint32_t m, double& done) {
    if (m == kNone) {
      done = keep_recorded(s, e);
      return true;
    }
    const PlanMsg& g = plan_.msgs[m];
    const bool blocking = role_of(e.op) != Role::Complete;
    // The Wait of an Isend carries no size: the message's, from the matching.
    const std::uint64_t k = blocking ? e.send_bytes : plan_.messages[m].bytes;
    if (!synchronous(m, k)) {
      done = blocking ? g.ts + cost_.send_cpu(k) + cold_send(m) : s.entry;
      return true;
    }
    if (g.tr == kUnknown) {
      if (!forced(s)) return false;
      done = std::max(s.entry, g.ts + cost_.send_cpu(k) + cold_send(m));  // resolved as eager
      return true;
    }
    done = std::max(s.entry, cost_.rndv_sender_done(k, g.ts, g.tr) + fresh(m, k));
    out_.sender_wait_s[m] =
        static_cast<float>(std::max(0.0, g.tr - std::max(s.entry, cost_.rts_arrival(g.ts))));
    return true;
  }

  // Recv, Sendrecv's receive half, or the Wait/Test completing an Irecv: all at entry tc.
  bool complete_receive(RankState& s, const Event& e, std::uint32_t m, double& done) {
    if (m == kNone) {
      done = keep_recorded(s, e);
      return true;
    }
    const PlanMsg& g = plan_.msgs[m];
    if (g.ts == kUnknown) {
      if (!forced(s)) return false;
      done = s.entry + s.recorded(e);
      return true;
    }
    const double tc = s.entry;
    const double tr = g.tr == kUnknown ? tc : g.tr;
    const std::uint64_t k = e.recv_bytes;
    const bool sync = synchronous(m, k);
    const double data =
        (sync ? cost_.rndv_arrival(k, g.ts, tr) : cost_.eager_arrival(k, g.ts) + cold_send(m)) + fresh(m, k);
    done = std::max(tc, std::max(tr, data) + cost_.recv_cpu(k) + cold_recv(m));
    out_.receiver_wait_s[m] = static_cast<float>(std::max(0.0, (sync ? cost_.rts_arrival(g.ts) : data) - tc));
    return true;
  }

  // ---- Collectives: each member runs its program of point-to-point steps.

  void begin_collective(RankState& s, const Event& e, std::uint32_t idx, std::uint32_t id) {
    PlanInstance& inst = plan_.instances[id];
    const std::uint32_t me = plan_.ranks[static_cast<std::size_t>(&s - states_.data())].crank_of[e.comm];
    if (inst.storage == kNone) inst.storage = acquire(static_cast<std::size_t>(inst.rounds) * inst.shape.n);
    s.inst = id;
    s.member = inst.member_base + me;
    arrival_[s.member] = s.entry;
    coll_event_[s.member] = idx;
    // The program is written into one scratch buffer sized for the largest communicator, then
    // kept in the rank's own buffers at its exact size: a rank's buffers grow to the largest
    // program it runs (log n for a barrier), never to n per rank for every rank (ranks squared).
    const std::uint32_t cap = coll_max_ops(std::max<std::uint32_t>(inst.shape.n, 1));
    if (scratch_ops_.size() < cap) scratch_ops_.resize(cap), scratch_steps_.resize(cap);
    std::uint32_t nops = 0;
    coll_program(inst.shape, me, scratch_ops_.data(), scratch_steps_.data(), nops, s.nsteps);
    auto& prog = progs_[static_cast<std::size_t>(&s - states_.data())];
    auto& steps = steps_[static_cast<std::size_t>(&s - states_.data())];
    if (prog.size() < nops) prog.resize(nops);
    if (steps.size() < s.nsteps) steps.resize(s.nsteps);
    std::copy_n(scratch_ops_.data(), nops, prog.data());
    std::copy_n(scratch_steps_.data(), s.nsteps, steps.data());
    s.prog = prog.data();
    s.steps = steps.data();
    s.step = 0;
    s.op = 0;
    s.step_open = false;
    s.end = s.entry;
    s.mode = Mode::InColl;
  }

  bool run_collective(RankState& s) {
    PlanInstance& inst = plan_.instances[s.inst];
    Slot* slots = storage_[inst.storage].data();
    const std::int32_t* world = plan_.comm_world.data() + inst.members_off;
    while (s.step < s.nsteps) {
      const std::uint32_t b = s.step ? s.steps[s.step - 1] : 0, end = s.steps[s.step];
      if (!s.step_open) {  // post the receives, then issue the sends one after the other
        s.step_start = s.end;
        double cpu = s.end;
        for (std::uint32_t i = b; i < end; ++i) {
          const CollOp& op = s.prog[i];
          if (op.send) continue;
          slots[op.slot].tr = s.step_start;
          slots[op.slot].fresh = take_fresh(static_cast<std::size_t>(&s - states_.data()), op.bytes);
          if (slots[op.slot].fresh) charge(s, fresh(slots[op.slot], op.bytes));
          wake(world[op.peer]);
        }
        for (std::uint32_t i = b; i < end; ++i) {
          const CollOp& op = s.prog[i];
          if (!op.send) continue;
          const double ts = std::max(cpu, s.last_ts + cost_.gap());
          s.last_ts = ts;
          slots[op.slot].ts = ts;
          slots[op.slot].cold = take_cold(static_cast<std::size_t>(&s - states_.data()), world[op.peer], op.bytes);
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
    coll_end_[s.member] = s.end;
    s.t = s.end;
    if (++inst.finished == inst.shape.n) release(inst.storage), inst.storage = kNone;
    s.mode = Mode::Between;
    return true;
  }

  bool block(RankState& s) {
    s.blocked = true;
    return false;
  }

  // Slot storage: reused once every member of an instance is through with it.
  std::uint32_t acquire(std::size_t size) {
    std::uint32_t id = kNone;
    for (std::size_t i = 0; i < free_.size(); ++i)
      if (storage_[free_[i]].capacity() >= size) {
        id = free_[i];
        free_[i] = free_.back();
        free_.pop_back();
        break;
      }
    if (id == kNone) {
      id = static_cast<std::uint32_t>(storage_.size());
      storage_.emplace_back();
    }
    storage_[id].assign(size, Slot{});
    return id;
  }
  void release(std::uint32_t id) { free_.push_back(id); }

  ReplayPlan& plan_;
  const Cost cost_;
  ReplayResult& out_;
  std::vector<RankState> states_;
  std::vector<std::uint32_t> ready_;
  std::vector<std::vector<CollOp>> progs_;
  std::vector<std::vector<std::uint32_t>> steps_;
  std::vector<CollOp> scratch_ops_;
  std::vector<std::uint32_t> scratch_steps_;
  std::vector<std::vector<Slot>> storage_;
  std::vector<std::uint32_t> free_;
};

template <class Cost>
ReplayResult replay(const ReplayInput& in, const Cost& cost) {
  ReplayPlan plan = detail::make_plan(in);
  ReplayResult out;
  out.sender_wait_s.assign(plan.msgs.size(), 0.0f);
  out.receiver_wait_s.assign(plan.msgs.size(), 0.0f);
  Engine<Cost> engine(plan, cost, out);
  engine.run();
  engine.charge_messages();

  const std::size_t P = plan.ranks.size();
  out.finish_s.assign(P, 0.0);
  out.actual_finish_s.assign(P, 0.0);
  for (std::size_t r = 0; r < P; ++r) {
    const PlanRank& pr = plan.ranks[r];
    if (!pr.present) continue;
    out.records += pr.n - pr.start_pos;
    out.finish_s[r] = engine.finish_[r] - plan.zero_s;
    out.actual_finish_s[r] = pr.actual_end_s - plan.zero_s;
    out.predicted_s = std::max(out.predicted_s, out.finish_s[r]);
    out.actual_s = std::max(out.actual_s, out.actual_finish_s[r]);
  }
  detail::describe_collectives(plan, engine.arrival_, engine.coll_end_, engine.coll_event_, out);
  if (out.recorded_calls)
    out.notes.push_back(fmt::format("{} records kept their recorded duration (partner missing or unmatched, "
                                    "Test/Iprobe that found nothing, Probe, communicator calls)",
                                    out.recorded_calls));
  if (plan.unusable_collectives)
    out.notes.push_back(fmt::format("{} collective calls kept their recorded duration (intercommunicator, or a "
                                    "member's trace or definition is missing)",
                                    plan.unusable_collectives));
  if (out.model_deadlocks)
    out.notes.push_back(fmt::format("the model deadlocked {} times where the run did not (synchronous sends in a "
                                    "cycle); each time the earliest blocked call was resolved as eager",
                                    out.model_deadlocks));
  if (plan.multithreaded)
    out.notes.push_back("ranks with several threads are replayed as one sequence in order of call entry");
  return out;
}

}  // namespace

ReplayResult replay_loggps(const ReplayInput& in, const LogGPSParams& p, const ColdStart& cold) {
  ReplayResult r = replay(in, LogGPSCost{LogGPS{p}, cold});
  detail::note_machine_terms(cold, r);
  return r;
}

ReplayResult replay_linear(const ReplayInput& in, const TwoRegimeLinearModel& model, const ColdStart& cold) {
  ReplayResult r = replay(in, LinearModelCost{model, cold});
  detail::note_machine_terms(cold, r);
  return r;
}

}  // namespace mstep::model
