// Internal to the replay (model/replay/replay.hpp): the engine that advances every rank through its
// records. Ranks advance through their records as far as the times they depend on are known; a
// rank that needs a partner's time not known yet (a send start for a receive, a receive post for a
// rendezvous send) stops, and the partner wakes it when it publishes that time. Each rank's records
// are read a window at a time and linked to their partners as they are read (replay_link.cpp); a
// message or a collective instance is freed when its last record is replayed. No virtual call per
// record: the cost model is a template parameter (replay_costs.hpp), instantiated for LogGPS and
// the linear baseline in each of the engine's files: replay_engine.cpp (setup, reading),
// replay_calls.cpp (the loop, point-to-point calls) and replay_engine_collectives.cpp (collectives).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "model/replay/replay_costs.hpp"
#include "model/replay/replay_plan.hpp"

namespace mstep::model::detail {

// A window may grow this far past an Irecv whose completion has not been read before the replay
// gives up waiting for it (it is then an Irecv never completed: no message).
constexpr std::uint32_t kMaxLookahead = 1u << 22;

// ---- The loop ------------------------------------------------------------------------------

enum class Mode : std::uint8_t { Between, InCall, InColl, Done };

struct RankState {
  RankWindow* w = nullptr;
  std::uint32_t pos = 0;                 // next position to start a call at
  std::uint32_t first = 0, last = 0;     // the current call's records [first, last)
  std::uint32_t cursor = 0;              // the record being completed
  std::uint32_t start_pos = 0;           // first position after MPI_Init
  Mode mode = Mode::Done;
  bool blocked = false;
  bool force = false;                    // deadlock fallback: resolve the next unknown time
  double t = 0;                          // end of the last completed call
  double entry = 0;                      // entry of the current call
  Op call_op = Op::Init;                 // its operation (for the observer)
  double end = 0;                        // completion of the current call so far
  double pending = 0;                    // computation seen between records of one call
  double last_ts = -1e300;               // start of the rank's last send (for g)
  double spt = 1e-9;
  std::uint64_t last_exit = 0;
  // What was read of the rank: records, and its recorded end (MPI_Finalize entry, else the
  // exit of its last record in the file).
  std::uint64_t records = 0;
  std::uint64_t finalize_enter = 0, last_record_exit = 0;
  bool finalize_seen = false;
  // The collective in progress.
  std::uint32_t inst = kNone;
  std::uint32_t me = 0;                  // its rank in the instance's communicator
  std::uint32_t step = 0, nsteps = 0, op = 0;
  bool step_open = false;
  double step_start = 0, step_end = 0;
  std::vector<CollOp> prog;
  std::vector<std::uint32_t> steps;
  // Requests of nonblocking collectives that kept their recorded duration: their completing
  // Wait/Test keeps its own too (in flight only: a completion removes its entry).
  std::vector<std::uint32_t> recorded_icolls;

  std::uint32_t at(std::uint32_t p) const { return w->order.empty() ? p : w->order[p]; }
  const Event& rec(std::uint32_t p) const { return w->ev[at(p) - w->base]; }
  std::uint32_t link(std::uint32_t p) const { return w->link[at(p) - w->base]; }
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
  Engine(const ReplayInput& in, RunInfo& run, const Cost& cost, ReplayResult& out);

  void run();

  // Per rank: predicted end, recorded end (ticks), records after MPI_Init.
  double finish(std::size_t r) const { return states_[r].t; }
  std::uint64_t recorded_end(std::size_t r) const {
    const RankState& s = states_[r];
    return s.finalize_seen ? s.finalize_enter : s.last_record_exit;
  }
  std::uint64_t records(std::size_t r) const { return states_[r].records - states_[r].start_pos; }
  bool present(std::size_t r) const { return states_[r].w && states_[r].records > 0; }
  double zero() const { return start_s_.empty() ? 0.0 : *std::min_element(start_s_.begin(), start_s_.end()); }
  std::vector<MessageWait>& message_waits() { return message_waits_; }
  CollectiveUses uses_;
  std::uint64_t unusable_collectives_ = 0;
  std::uint64_t recorded_substitutes_ = 0;  // of those, libmstep's planned broadcasts (esssp, auto)
  std::uint64_t undecomposed_collectives_ = 0;  // of those, operations without an algorithm (Scan)
  std::uint64_t nonblocking_collectives_ = 0;   // charged as their blocking versions at their start

 private:
  // ---- Reading -------------------------------------------------------------------------------

  void note_read(RankState& s, std::uint32_t from);

  // Reads the next window of rank r, dropping the records it is through with.
  void load(std::uint32_t r);

  // Whether position p exists, reading until it is linked for good.
  bool have(RankState& s, std::uint32_t p) {
    const auto r = static_cast<std::uint32_t>(&s - states_.data());
    for (;;) {
      if (p < linker_.linked_end(r, *s.w)) return true;
      if (!s.w->more()) return p < s.w->end();
      load(r);
    }
  }

  // ---- Machine terms -------------------------------------------------------------------------

  void wake(std::int32_t rank) {
    if (rank < 0) return;
    RankState& s = states_[static_cast<std::size_t>(rank)];
    if (s.blocked) {
      s.blocked = false;
      ready_.push_back(static_cast<std::uint32_t>(rank));
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
  double cold_send(const LiveMsg& m) const { return (m.machine & kCold) ? cost_.cold().send : 0.0; }
  double cold_recv(const LiveMsg& m) const { return (m.machine & kCold) ? cost_.cold().recv : 0.0; }
  double fresh(const LiveMsg& m, std::uint64_t k) const {
    return (m.machine & kFresh) ? cost_.cold().fresh_per_byte * static_cast<double>(k) : 0.0;
  }
  double cold_send(const Slot& sl) const { return sl.cold ? cost_.cold().send : 0.0; }
  double cold_recv(const Slot& sl) const { return sl.cold ? cost_.cold().recv : 0.0; }
  double fresh(const Slot& sl, std::uint64_t k) const {
    return sl.fresh ? cost_.cold().fresh_per_byte * static_cast<double>(k) : 0.0;
  }
  // A machine term paid by rank s in the collective it is in.
  void charge(const RankState& s, double seconds) {
    out_.machine_charges.push_back({static_cast<std::int32_t>(&s - states_.data()),
                                    linker_.instance(s.inst).event[s.me], seconds});
  }
  // A message's last record is replayed: what it leaves behind, then it is freed.
  void retire(std::uint32_t id) {
    if (!linker_.release_ref(id)) return;
    const LiveMsg& m = linker_.msg(id);
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

  bool synchronous(const LiveMsg& m, std::uint64_t bytes) const {
    if (m.mode == detail::kSynchronous) return Cost::kSynchronousSends;
    if (m.mode == detail::kBuffered) return false;
    return cost_.rendezvous(bytes);
  }
  // The deadlock fallback: true once, if the rank was chosen to break a cycle. A partner whose
  // records are all read and never met this message means it has none: not a deadlock.
  bool forced(RankState& s, const LiveMsg& m, std::int32_t partner, bool& unmatched) {
    if (!s.force) return false;
    s.force = false;
    unmatched = !m.matched() && (partner < 0 || !windows_[static_cast<std::size_t>(partner)].more());
    if (!unmatched) ++out_.model_deadlocks;
    return true;
  }
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

  // ---- Calls ---------------------------------------------------------------------------------

  void advance(RankState& s);

  // Reads the next call: its computation gap, its entry, and publishes the times it gives
  // partners (send starts, receive posts). False when the rank is done.
  bool start_call(RankState& s);

  void publish(RankState& s, const Event& e, std::uint32_t m);

  bool complete_call(RankState& s);

  // When the record's part of the call is done; false if that needs a time not known yet.
  bool complete_record(RankState& s, const Event& e, std::uint32_t m, double& done);

  // A blocking send (entry = ts) or the Wait of an Isend (entry >= ts + T1).
  bool complete_send(RankState& s, const Event& e, std::uint32_t m, double& done);

  // Recv, Sendrecv's receive half, or the Wait/Test completing an Irecv: all at entry tc.
  bool complete_receive(RankState& s, const Event& e, std::uint32_t m, double& done);

  // ---- Collectives: each member runs its program of point-to-point steps.

  // The collective record at position p: its instance once every member has read it.
  bool start_collective(RankState& s, std::uint32_t p);

  // The residual of `shape`'s operation at its block size, per round of its algorithm relative to
  // the same operation's at 2 ranks (where it was measured). MPICH's algorithms only: libmstep's
  // substitutes were not measured.
  double calibrated_residual(const CollShape& shape) const;

  // Reads ahead in the members that have not read their record of this instance yet, until they
  // have or their records end.
  void read_members_to(LiveInstance& inst);

  // `event`: the collective record's index in the rank's records (file order).
  void begin_collective(RankState& s, const Event& e, std::uint32_t event, std::uint32_t id);

  bool run_collective(RankState& s);

  bool block(RankState& s) {
    s.blocked = true;
    return false;
  }

  RunInfo& run_;
  Linker linker_;
  const Cost cost_;
  ReplayResult& out_;
  const bool collect_waits_;  // per-message waits kept (the whole-trace form of the result)
  ReplayObserver* const observer_;
  // The call that just ended on rank `s` (entry s.entry, exit s.t) to the observer, if any.
  void told(const RankState& s) {
    if (observer_) [[unlikely]]
      observer_->call(static_cast<std::int32_t>(&s - states_.data()), s.call_op, s.entry, s.t);
  }
  std::vector<RankState> states_;
  std::vector<RankWindow> windows_;
  std::vector<std::unique_ptr<RankTrace>> loaded_;  // rank files read whole (see the constructor)
  std::vector<std::uint32_t> ready_;
  std::vector<double> start_s_;
  std::vector<MessageWait> message_waits_;
  bool cold_on_ = false;                                        // the cost model has a cold start
  std::unordered_map<std::uint64_t, std::uint32_t> pair_sent_;  // beyond 2048 ranks
  std::vector<std::uint32_t> pair_dense_;                       // [src * P + dst], up to 2048 ranks
  // Per receiving rank, the sizes it has received before, sorted: programs use few sizes, so a
  // binary search beats hashing, and a new size (an insert) is rare.
  std::vector<std::vector<std::uint64_t>> seen_sizes_;
  std::vector<CollOp> scratch_ops_;
  std::vector<std::uint32_t> scratch_steps_;
};

// Each engine file instantiates its members for both cost models.
#define MSTEP_REPLAY_INSTANTIATE(MEMBERS) \
  MEMBERS(LogGPSCost)                    \
  MEMBERS(LinearModelCost)

}  // namespace mstep::model::detail
