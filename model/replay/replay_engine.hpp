// Internal to the replay (model/replay/replay.cpp): the engine that replays a run's records under a
// cost model. Ranks advance through their records as far as the times they depend on are known; a
// rank that needs a partner's time not known yet (a send start for a receive, a receive post for a
// rendezvous send) stops, and the partner wakes it when it publishes that time. Each rank's records
// are read a window at a time and linked to their partners as they are read
// (model/replay/replay_link.cpp); a message or a collective instance is freed when its last record
// is replayed. No virtual call per record: the cost model is a template parameter.
//
// The class is declared here; its members are defined by concern in replay_engine_run.hpp (setup,
// the loop, reading), replay_engine_calls.hpp (machine terms, point-to-point calls) and
// replay_engine_coll.hpp (collectives). One translation unit includes them all (replay.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "format/flat_map.hpp"
#include "model/replay/replay_costs.hpp"
#include "model/replay/replay_plan.hpp"

namespace mstep::model::detail {
// Internal linkage, as the one translation unit that includes this (replay.cpp) needs: with it the
// compiler inlines each member called from one place into the loop, and the per-record path is one
// function (in a named namespace, run() called publish, complete_call and the rest out of line:
// 4.6% more instructions in replay_bench 64 200000 random, callgrind).
namespace {

// A window may grow this far past an Irecv whose completion has not been read before the replay
// gives up waiting for it (it is then an Irecv never completed: no message).
inline constexpr std::uint32_t kMaxLookahead = 1u << 22;

// ---- A rank in the replay ----------------------------------------------------------------

// CollWait: the rank has entered a collective whose other members' records are not all read yet
// (its record is at `first`); it waits for them instead of reading every member ahead to it.
enum class Mode : std::uint8_t { Between, InCall, InColl, CollWait, Done };

struct RankState {
  RankWindow* w = nullptr;
  std::uint32_t pos = 0;                 // next position to start a call at
  std::uint32_t first = 0, last = 0;     // the current call's records [first, last)
  std::uint32_t cursor = 0;              // the record being completed
  std::uint32_t start_pos = 0;           // first position after MPI_Init
  std::uint32_t linked = 0;              // the linker's end when last asked (records below it are final)
  Mode mode = Mode::Done;
  bool blocked = false;
  bool force = false;                    // deadlock fallback: resolve the next unknown time
  bool read_members = false;             // CollWait with nothing else to run: read the members ahead
  bool listed_waiting = false;           // in its instance's waiting list (a spurious wake lists it once)
  double t = 0;                          // end of the last completed call
  double entry = 0;                      // entry of the current call
  Op call_op = Op::Init;                 // its operation (for the observer)
  double end = 0;                        // completion of the current call so far
  double busy = 0;                       // CPU time the current call has spent from its entry on overheads
  double exchange_s = 0;                 // the current call's calibrated exchange residual (0: none)
  double irecv_gap = 0;                  // computation before the rank's last MPI_Irecv (calibrated runs only)
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
  bool step_at_a_time = false;           // a dissemination barrier: prog holds the current step only
  double step_start = 0, step_end = 0;
  std::vector<CollOp> prog;
  std::vector<std::uint32_t> steps;
  // Requests of nonblocking collectives that kept their recorded duration: their completing
  // Wait/Test keeps its own too (in flight only: a completion removes its entry).
  std::vector<std::uint32_t> recorded_icolls;
  // Messages the previous call posted with an Irecv or an Isend (`sent`): their tp, or tq, is this
  // rank's next call's entry. `event` names the record, so that a message slot freed and reused
  // meanwhile (a request id reused without a completion, say) is not taken for it.
  struct Posted {
    std::uint32_t msg, event;
    bool sent;
  };
  std::vector<Posted> posted;

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
  bool reached_rendezvous() const { return cost_.reached_rendezvous(); }
  CollectiveUses uses_;
  std::uint64_t unusable_collectives_ = 0;
  std::uint64_t recorded_substitutes_ = 0;  // of those, libmstep's planned broadcasts (esssp, auto)
  std::uint64_t undecomposed_collectives_ = 0;  // of those, too large to lay out (choose_collective)
  std::uint64_t nonblocking_collectives_ = 0;   // charged as their blocking versions at their start

 private:
  // ---- Reading (model/replay/replay_engine_run.hpp) --------------------------------------

  void note_read(RankState& s, std::uint32_t from);
  void load(std::uint32_t r);
  bool have(RankState& s, std::uint32_t p);

  // ---- Machine terms (model/replay/replay_engine_calls.hpp) ---------------------------------

  void wake(std::int32_t rank);
  bool take_cold(std::size_t src, std::int32_t dst, std::uint64_t k);
  // Beyond 2048 ranks. Out of line and cold: inlined, the map's code made complete_receive and
  // complete_send save more registers on every call, 2% more instructions in a 64-rank replay, where
  // it never runs (callgrind, replay_bench 64 200000 random).
  [[gnu::noinline, gnu::cold]] bool take_cold_sparse(std::uint64_t key) {
    std::uint32_t* sent = pair_sent_.find(key);
    if (!sent) sent = &pair_sent_.insert(key, 0);
    return ++*sent <= cost_.cold().messages;
  }
  bool take_fresh(std::size_t dst, std::uint64_t k);
  double cold_send(const LiveMsg& m) const { return (m.machine & kCold) ? cost_.cold().send : 0.0; }
  double cold_recv(const LiveMsg& m) const { return (m.machine & kCold) ? cost_.cold().recv : 0.0; }
  double fresh(const LiveMsg& m, std::uint64_t k) const {
    return (m.machine & kFresh) ? cost_.cold().fresh_per_byte * static_cast<double>(k) : 0.0;
  }
  // A collective's slot i, whose instance's LiveInstance::machine is `machine` (null: none).
  double cold_send(const std::uint8_t* machine, std::uint32_t i) const {
    return machine && (machine[i] & kCold) ? cost_.cold().send : 0.0;
  }
  double cold_recv(const std::uint8_t* machine, std::uint32_t i) const {
    return machine && (machine[i] & kCold) ? cost_.cold().recv : 0.0;
  }
  double fresh(const std::uint8_t* machine, std::uint32_t i, std::uint64_t k) const {
    return machine && (machine[i] & kFresh) ? cost_.cold().fresh_per_byte * static_cast<double>(k) : 0.0;
  }
  // A machine term paid by rank s in the collective it is in.
  void charge(const RankState& s, double seconds) {
    out_.machine_charges.push_back({static_cast<std::int32_t>(&s - states_.data()),
                                    linker_.instance(s.inst).event[s.me], seconds});
  }
  [[gnu::noinline]] void forget_posted(const LiveMsg& m, std::uint32_t id);
  void retire(std::uint32_t id);

  // The rank enters MPI at t: the receives its previous call posted can answer their senders.
  // Inline only the test: the per-record path stays small enough for the compiler to keep the
  // engine in one piece (out of line, the replay ran 7% more instructions).
  void progressed(RankState& s, double t) {
    if (!s.posted.empty()) [[unlikely]] progressed_posts(s, t);
  }
  [[gnu::noinline]] void progressed_posts(RankState& s, double t);
  bool answered(const LiveMsg& g, double& tr) const;

  bool push_delay(const LiveMsg& g, double tr, double& delay) const;

  bool synchronous(const LiveMsg& m, std::uint64_t bytes) const {
    if (m.mode == detail::kSynchronous) return Cost::kSynchronousSends;
    if (m.mode == detail::kBuffered) return false;
    return cost_.rendezvous(bytes);
  }
  bool forced(RankState& s, const LiveMsg& m, std::int32_t partner, bool& unmatched);
  bool forced(RankState& s);
  double keep_recorded(const RankState& s, const Event& e) {
    ++out_.recorded_calls;
    return s.entry + s.recorded(e);
  }

  // ---- Calls (model/replay/replay_engine_calls.hpp) ------------------------------------------

  void advance(RankState& s);
  bool start_call(RankState& s);
  void publish(RankState& s, const Event& e, std::uint32_t m, std::uint32_t event);
  bool complete_call(RankState& s);
  bool complete_record(RankState& s, const Event& e, std::uint32_t m, double& done);
  bool complete_send(RankState& s, const Event& e, std::uint32_t m, double& done);
  bool complete_receive(RankState& s, const Event& e, std::uint32_t m, double& done);

  // ---- Collectives: each member runs its program of point-to-point steps
  // (model/replay/replay_engine_coll.hpp).

  bool start_collective(RankState& s, std::uint32_t p);
  [[gnu::noinline, gnu::cold]] double exchange_residual(const RankState& s);

  void set_calibrated_residual(LiveInstance& inst) const;

  void read_members_to(LiveInstance& inst);
  void begin_collective(RankState& s, const Event& e, std::uint32_t event, std::uint32_t id);
  bool run_collective(RankState& s);

  bool block(RankState& s) {
    s.blocked = true;
    return false;
  }

  bool wake_collective_waiters();

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
  bool progress_on_ = false, push_on_ = false;  // Cost::progress_in_mpi(), Cost::push(): the rendezvous' progress
  // Beyond 2048 ranks, open addressing: a node allocation per pair and the rehashes were a sixth
  // of a 262 144-rank report.
  FlatMap<std::uint64_t, std::uint32_t> pair_sent_{0};
  std::vector<std::uint32_t> pair_dense_;                       // [src * P + dst], up to 2048 ranks
  // Per receiving rank, the sizes it has received before, sorted: programs use few sizes, so a
  // binary search beats hashing, and a new size (an insert) is rare.
  std::vector<std::vector<std::uint64_t>> seen_sizes_;
  std::vector<CollOp> scratch_ops_;
  std::vector<std::uint32_t> scratch_steps_;
};

}  // namespace
}  // namespace mstep::model::detail
