// The replay loop (semantics in model/replay/replay.hpp). Ranks advance through their records as far as
// the times they depend on are known; a rank that needs a partner's time not known yet (a send
// start for a receive, a receive post for a rendezvous send) stops, and the partner wakes it when
// it publishes that time. Each rank's records are read a window at a time and linked to their
// partners as they are read (model/replay/replay_link.cpp); a message or a collective instance is
// freed when its last record is replayed. No virtual call per record: the cost model is a
// template parameter, and records are read in windows.
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "format/flat_map.hpp"
#include "model/replay/replay_costs.hpp"
#include "model/replay/replay_plan.hpp"

namespace mstep::model {
namespace {

using detail::CollectiveUses;
using detail::kCold;
using detail::kFresh;
using detail::kNone;
using detail::LinearModelCost;
using detail::Linker;
using detail::LiveInstance;
using detail::LiveMsg;
using detail::LogGPSCost;
using detail::MessageWait;
using detail::kUnknown;
using detail::RankWindow;
using detail::RunInfo;
using detail::Slot;


// A window may grow this far past an Irecv whose completion has not been read before the replay
// gives up waiting for it (it is then an Irecv never completed: no message).
constexpr std::uint32_t kMaxLookahead = 1u << 22;

// A rank file read an Events frame at a time (ReplayInput::files), handed to the replay `step`
// records at a time: the window stays small however large the recorder's frames (linking far
// ahead of the replay only fills the channels).
class FileSource final : public detail::RecordSource {
 public:
  FileSource(const std::string& path, std::uint32_t step, bool read_ahead)
      : reader_(path, std::max<std::uint32_t>(step, 1), read_ahead), step_(std::max<std::uint32_t>(step, 1)) {}
  bool read(detail::BigVector<Event>& out) override {
    if (at_ == rest_.size()) {
      // The reader hands out `step` records at a time (a chunk), except a reader ahead on a thread
      // of its own, whose chunks may be larger: the records are decoded into one buffer of the
      // thread's, and only what is left past a step is kept here. A buffer a rank, kept at its
      // capacity, was a second copy of every window (16 384 ranks: 64 MiB of a 284 MiB report).
      thread_local std::vector<Event> decoded;
      decoded.clear();
      if (!reader_.read(decoded)) return false;
      const std::size_t k = std::min<std::size_t>(step_, decoded.size());
      out.insert(out.end(), decoded.begin(), decoded.begin() + static_cast<std::ptrdiff_t>(k));
      if (k < decoded.size()) {
        rest_.assign(decoded.begin() + static_cast<std::ptrdiff_t>(k), decoded.end());
        at_ = 0;
      }
      return true;
    }
    const std::size_t k = std::min<std::size_t>(step_, rest_.size() - at_);
    out.insert(out.end(), rest_.begin() + static_cast<std::ptrdiff_t>(at_), rest_.begin() + static_cast<std::ptrdiff_t>(at_ + k));
    at_ += k;
    if (at_ == rest_.size()) {
      std::vector<Event>().swap(rest_);
      at_ = 0;
    }
    return true;
  }

 private:
  RankEventReader reader_;
  std::uint32_t step_;
  std::vector<Event> rest_;  // a chunk's records past the step handed out (read ahead only)
  std::size_t at_ = 0;
};

// ---- The loop ------------------------------------------------------------------------------

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
  Engine(const ReplayInput& in, RunInfo& run, const Cost& cost, ReplayResult& out)
      : run_(run), linker_(run), cost_(cost), out_(out), collect_waits_(in.window == 0), observer_(in.observer) {
    const std::size_t P = run.ranks.size();
    states_.resize(P);
    windows_.resize(P);
    ready_.reserve(P);
    cold_on_ = cost.cold().any();
    progress_on_ = cost.progress_in_mpi();
    push_on_ = cost.push();
    // Pair counts in a dense matrix up to 2048 ranks (16 MiB): a hash lookup per eager message
    // costs the replay ~15% of its speed.
    if (cold_on_ && cost.cold().messages > 0 && P <= 2048) pair_dense_.assign(P * P, 0);
    for (std::size_t r = 0; r < P; ++r) {
      if (!run.ranks[r].present) continue;
      const RankTrace* tp = in.ranks[r];
      bool stream = false;
      if (r < in.files.size()) {
        if (in.window == 0 || tp->several_threads) {
          // Needed whole (a whole replay, or threads to put in order of entry): read it all.
          loaded_.push_back(std::make_unique<RankTrace>(read_rank_trace(in.files[r], /*with_steps=*/false)));
          tp = loaded_.back().get();
        } else {
          stream = true;
        }
      }
      const RankTrace& t = *tp;
      RankWindow& w = windows_[r];
      RankState& s = states_[r];
      s.w = &w;
      s.spt = run.ranks[r].spt;
      // Several threads: their frames interleave in the file; the rank is read whole and
      // replayed in order of entry (stable, so a call's continuation records stay behind their
      // first record).
      const bool threads = std::any_of(t.event_thread.begin(), t.event_thread.end(),
                                       [&](std::uint16_t th) { return th != t.event_thread.front(); });
      if (stream) {
        // A thread a rank file, for runs of few ranks and large files.
        w.source = std::make_unique<FileSource>(in.files[r], in.window, in.read_ahead && read_ahead_pays(P, tp->file_bytes));
      } else if (in.window == 0 || threads) {
        w.ev = t.events.data();
        w.size = static_cast<std::uint32_t>(t.events.size());
        w.link.assign(w.size, kNone);
        note_read(s, 0);
        linker_.link(static_cast<std::uint32_t>(r), w, 0);
        linker_.finish(static_cast<std::uint32_t>(r), w);
        if (threads) {
          w.order.resize(w.size);
          for (std::uint32_t i = 0; i < w.size; ++i) w.order[i] = i;
          std::stable_sort(w.order.begin(), w.order.end(),
                           [&](std::uint32_t a, std::uint32_t b) { return w.ev[a].t_enter < w.ev[b].t_enter; });
        }
      } else {
        // In memory already: windows over it, no copy.
        w.view = w.ev = t.events.data();
        w.view_total = static_cast<std::uint32_t>(t.events.size());
        w.view_step = in.window;
      }
    }
    for (std::size_t r = 0; r < P; ++r) {
      if (!run.ranks[r].present) continue;
      RankState& s = states_[r];
      // Start after MPI_Init, at its exit (or at the first record without one).
      s.start_pos = 0;
      if (!have(s, 0)) continue;
      s.last_exit = s.rec(0).t_enter;
      for (std::uint32_t p = 0; have(s, p); ++p) {
        const Event& e = s.rec(p);
        if (e.op == Op::Init || e.op == Op::Init_thread) {
          s.start_pos = p + 1;
          s.last_exit = e.t_exit;
          break;
        }
      }
      s.pos = s.start_pos;
      s.t = in.timeline.seconds(static_cast<int>(r), s.last_exit);
      start_s_.push_back(s.t);
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
      // Nothing can move. Ranks waiting in a collective for its members' records read them ahead
      // now (what they would have done at once before waiting was tried): that changes no time.
      if (wake_collective_waiters()) continue;
      // Otherwise all ranks are done, or the model deadlocked where the run did not. Resolve the
      // earliest blocked call and go on.
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

  void note_read(RankState& s, std::uint32_t from) {
    const RankWindow& w = *s.w;
    for (std::uint32_t i = from; i < w.end(); ++i) {
      const Event& e = w.ev[i - w.base];
      if (e.op == Op::Finalize) s.finalize_seen = true, s.finalize_enter = e.t_enter;
    }
    if (w.end() > from) s.last_record_exit = w.ev[w.end() - 1 - w.base].t_exit;
    s.records = w.end();
  }

  // Reads the next window of rank r, dropping the records it is through with.
  void load(std::uint32_t r) {
    RankWindow& w = windows_[r];
    RankState& s = states_[r];
    if (!w.more()) return;
    const std::uint32_t keep =
        std::min(s.mode == Mode::InCall || s.mode == Mode::CollWait ? s.first : s.pos, linker_.linked_end(r, w));
    if (keep > w.base) {
      const std::uint32_t drop = std::min(keep, w.end()) - w.base;
      if (!w.view) w.owned.erase(w.owned.begin(), w.owned.begin() + drop);
      w.link.erase(w.link.begin(), w.link.begin() + drop);
      w.base += drop;
      w.size -= drop;
    }
    const std::uint32_t from = w.end();
    if (w.view) {
      w.size += std::min(w.view_step, w.view_total - from);
      w.ev = w.view + w.base;
    } else if (w.source->read(w.owned)) {
      w.ev = w.owned.data();
      w.size = static_cast<std::uint32_t>(w.owned.size());
    } else {
      w.source.reset();
    }
    if (w.end() > from) {
      w.link.resize(w.size, kNone);
      note_read(s, from);
      linker_.link(r, w, from);
    }
    if (!w.more()) {
      linker_.finish(r, w);
      return;
    }
    if (w.end() - linker_.linked_end(r, w) > kMaxLookahead) linker_.give_up_oldest(r, w);
  }

  // Whether position p exists, reading until it is linked for good.
  bool have(RankState& s, std::uint32_t p) {
    // The linker's end only grows (a deferred receive is read after the ones before it, and leaves
    // first): below the last one seen, a record is final without asking.
    if (p < s.linked) [[likely]] return true;
    const auto r = static_cast<std::uint32_t>(&s - states_.data());
    for (;;) {
      s.linked = linker_.linked_end(r, *s.w);
      if (p < s.linked) return true;
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
    return take_cold_sparse((static_cast<std::uint64_t>(src) << 32) | static_cast<std::uint32_t>(dst));
  }
  // Beyond 2048 ranks. Out of line and cold: inlined, the map's code made complete_receive and
  // complete_send save more registers on every call, 2% more instructions in a 64-rank replay, where
  // it never runs (callgrind, replay_bench 64 200000 random).
  [[gnu::noinline, gnu::cold]] bool take_cold_sparse(std::uint64_t key) {
    std::uint32_t* sent = pair_sent_.find(key);
    if (!sent) sent = &pair_sent_.insert(key, 0);
    return ++*sent <= cost_.cold().messages;
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
  [[gnu::noinline]] void forget_posted(const LiveMsg& m, std::uint32_t id) {
    auto forget = [&](std::int32_t r) {
      auto& posted = states_[static_cast<std::size_t>(r)].posted;
      posted.erase(std::remove_if(posted.begin(), posted.end(), [&](const auto& p) { return p.msg == id; }), posted.end());
    };
    if (m.tp == kUnknown && m.dst >= 0) forget(m.dst);
    if (push_on_ && m.tq == kUnknown && m.src >= 0 && m.src != m.dst) forget(m.src);
  }
  void retire(std::uint32_t id) {
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

  // The rank enters MPI at t: the receives its previous call posted can answer their senders.
  // Inline only the test: the per-record path stays small enough for the compiler to keep the
  // engine in one piece (out of line, the replay ran 7% more instructions).
  void progressed(RankState& s, double t) {
    if (!s.posted.empty()) [[unlikely]] progressed_posts(s, t);
  }
  [[gnu::noinline]] void progressed_posts(RankState& s, double t) {
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
  bool answered(const LiveMsg& g, double& tr) const {
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
  bool push_delay(const LiveMsg& g, double tr, double& delay) const {
    delay = 0;
    if (!cost_.push() || g.tq == g.ts) return true;
    if (g.tq == kUnknown) return false;
    delay = std::max(0.0, g.tq - cost_.cts_back(g.ts, tr));
    return true;
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
        case Mode::CollWait:
          s.mode = Mode::Between;
          if (!start_collective(s, s.first)) return;
          break;
      }
    }
  }

  // Reads the next call: its computation gap, its entry, and publishes the times it gives
  // partners (send starts, receive posts). False when the rank is done.
  bool start_call(RankState& s) {
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
    if (run_.collective_times) [[unlikely]] s.exchange_s = exchange_residual(s);
    s.cursor = s.first;
    s.end = s.entry;
    s.busy = 0;
    s.mode = Mode::InCall;
    return true;
  }

  void publish(RankState& s, const Event& e, std::uint32_t m, std::uint32_t event) {
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

  bool complete_call(RankState& s) {
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
  bool complete_record(RankState& s, const Event& e, std::uint32_t m, double& done) {
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
  bool complete_send(RankState& s, const Event& e, std::uint32_t m, double& done) {
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
  bool complete_receive(RankState& s, const Event& e, std::uint32_t m, double& done) {
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

  // ---- Collectives: each member runs its program of point-to-point steps.

  // The collective record at position p: its instance once every member has read it.
  bool start_collective(RankState& s, std::uint32_t p) {
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
  // Out of line and cold: inlined into the call's path, the Sendrecv check cost a 64-rank
  // ping-pong 4% more instructions in calls that are no exchange (callgrind).
  [[gnu::noinline, gnu::cold]] double exchange_residual(const RankState& s) {
    if (s.last - s.first != 2 || s.link(s.first) == kNone || s.link(s.first + 1) == kNone) return 0;
    const Op op = s.call_op == Op::Sendrecv_replace ? Op::Sendrecv : s.call_op;
    if (op != Op::Sendrecv && op != Op::Waitall) return 0;
    const auto it = run_.collective_times->find(op);
    if (it == run_.collective_times->end()) return 0;
    const Event& a = s.rec(s.first);
    const Event& b = s.rec(s.first + 1);
    if (op == Op::Sendrecv) {
      if (a.peer < 0 || b.peer != a.peer || !(b.flags & kRecvHalf)) return 0;
      return it->second.residual(std::max(a.send_bytes, b.recv_bytes));
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
    return it->second.residual(std::max(sent.bytes, in.recv_bytes));
  }

  // The residual of `shape`'s operation at its block size, per round of its algorithm relative to
  // the same operation's at 2 ranks (where it was measured). MPICH's algorithms only: libmstep's
  // substitutes were not measured.
  double calibrated_residual(const CollShape& shape) const {
    if (!run_.collective_times || shape.substitute || shape.algo == CollAlgo::Unsupported || shape.algo == CollAlgo::Nothing)
      return 0;
    const auto it = run_.collective_times->find(blocking_collective(shape.op));
    if (it == run_.collective_times->end()) return 0;
    const CollShape two = choose_collective(shape.op, 2, 0, shape.m, CollectiveSubstitutes{});
    const std::uint32_t r2 = std::max<std::uint32_t>(coll_rounds(two), 1);
    return it->second.residual(shape.m) * static_cast<double>(coll_rounds(shape)) / static_cast<double>(r2);
  }

  // Reads ahead in the members that have not read their record of this instance yet, until they
  // have or their records end.
  void read_members_to(LiveInstance& inst) {
    const auto k = static_cast<std::uint32_t>(inst.key & 0xffffffffu);
    for (const std::int32_t m : *inst.members) {
      const auto r = static_cast<std::uint32_t>(m);
      while (windows_[r].more() && linker_.collectives_read(r, inst.gcomm) <= k) load(r);
    }
  }

  // `event`: the collective record's index in the rank's records (file order).
  void begin_collective(RankState& s, const Event& e, std::uint32_t event, std::uint32_t id) {
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

  bool run_collective(RankState& s) {
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

  bool block(RankState& s) {
    s.blocked = true;
    return false;
  }

  // Ranks still waiting in a collective for its members' records: made ready to read them ahead.
  // False when there were none. A look over every rank, as the deadlock fallback after it takes.
  bool wake_collective_waiters() {
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

template <class Cost>
ReplayResult replay(const ReplayInput& in, const Cost& cost) {
  RunInfo run = detail::make_ranks(in);
  ReplayResult out;
  Engine<Cost> engine(in, run, cost, out);
  engine.run();

  const std::size_t P = run.ranks.size();
  const double zero = engine.zero();
  out.finish_s.assign(P, 0.0);
  out.actual_finish_s.assign(P, 0.0);
  for (std::size_t r = 0; r < P; ++r) {
    if (!engine.present(r)) continue;
    out.records += engine.records(r);
    out.finish_s[r] = engine.finish(r) - zero;
    out.actual_finish_s[r] = in.timeline.seconds(static_cast<int>(r), engine.recorded_end(r)) - zero;
    out.predicted_s = std::max(out.predicted_s, out.finish_s[r]);
    out.actual_s = std::max(out.actual_s, out.actual_finish_s[r]);
  }
  // Per matched message, in the matching's order (by sender, then send record).
  if (in.window == 0) {
    const auto& messages = in.matching.messages;
    out.sender_wait_s.assign(messages.size(), 0.0f);
    out.receiver_wait_s.assign(messages.size(), 0.0f);
    for (const MessageWait& w : engine.message_waits()) {
      const auto it = std::lower_bound(messages.begin(), messages.end(), w, [](const Message& m, const MessageWait& x) {
        return m.src != x.src ? m.src < x.src : m.send_event < x.send_event;
      });
      if (it == messages.end() || it->src != w.src || it->send_event != w.send_event) continue;
      const auto i = static_cast<std::size_t>(it - messages.begin());
      out.sender_wait_s[i] = w.sender_wait_s;
      out.receiver_wait_s[i] = w.receiver_wait_s;
    }
  }
  std::sort(out.collective_waits.begin(), out.collective_waits.end(), [](const auto& a, const auto& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.event < b.event;
  });
  engine.uses_.describe(out);
  if (out.recorded_calls)
    out.notes.push_back(fmt::format("{} records kept their recorded duration (partner missing or unmatched, "
                                    "Test/Iprobe that found nothing, Probe, communicator and request management)",
                                    out.recorded_calls));
  if (engine.recorded_substitutes_)
    out.notes.push_back(fmt::format("{} calls of libmstep's MSTEP_BCAST=esssp or auto kept their recorded duration "
                                    "(the tree depends on the run's per-pair latencies)",
                                    engine.recorded_substitutes_));
  if (engine.undecomposed_collectives_)
    out.notes.push_back(fmt::format("{} collective calls kept their recorded duration (MPI_Scan, MPI_Exscan and "
                                    "their nonblocking versions: no algorithm modelled)",
                                    engine.undecomposed_collectives_));
  if (engine.nonblocking_collectives_)
    out.notes.push_back(fmt::format("{} nonblocking collective calls were charged as their blocking versions at "
                                    "their start, their completing Wait/Test as no time: overlap with computation "
                                    "is not credited",
                                    engine.nonblocking_collectives_));
  if (const std::uint64_t other =
          engine.unusable_collectives_ - engine.recorded_substitutes_ - engine.undecomposed_collectives_)
    out.notes.push_back(fmt::format("{} collective calls kept their recorded duration (intercommunicator, or a "
                                    "member's trace or definition is missing)",
                                    other));
  if (out.model_deadlocks)
    out.notes.push_back(fmt::format("the model deadlocked {} times where the run did not (synchronous sends in a "
                                    "cycle); each time the earliest blocked call was resolved as eager",
                                    out.model_deadlocks));
  if (run.multithreaded)
    out.notes.push_back("ranks with several threads are replayed as one sequence in order of call entry");
  return out;
}

}  // namespace

ReplayResult replay_loggps(const ReplayInput& in, const LogGPSParams& p, const ColdStart& cold) {
  ReplayResult r = replay(in, LogGPSCost{LogGPS{p}, cold});
  detail::note_machine_terms(cold, r);
  if (p.S != kInfiniteBytes && p.rendezvous_model == RendezvousModel::Delivered)
    r.notes.push_back(fmt::format(
        "rendezvous from {} B as calibrated, not as MODELS.md: its handshake takes {:.3g} us beyond o + L + o, its "
        "bytes move once at Gl, MPI_Send returns when they are delivered, and a request-to-send is answered only "
        "inside MPI{}",
        p.S, p.H * 1e6, p.rendezvous_push ? " (the data, too, leaves only with its sender inside MPI)" : ""));
  return r;
}

ReplayResult replay_linear(const ReplayInput& in, const TwoRegimeLinearModel& model, const ColdStart& cold) {
  ReplayResult r = replay(in, LinearModelCost{model, cold});
  detail::note_machine_terms(cold, r);
  return r;
}

}  // namespace mstep::model
