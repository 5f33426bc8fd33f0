// The replay (semantics in model/replay/replay.hpp): the engine (model/replay/replay_engine.hpp) run
// under a cost model, and what its result says about the run.
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "model/replay/replay_engine.hpp"
#include "model/replay/replay_engine_calls.hpp"
#include "model/replay/replay_engine_coll.hpp"
#include "model/replay/replay_engine_run.hpp"

namespace mstep::model {
namespace {

using detail::Engine;
using detail::LinearModelCost;
using detail::LogGPSCost;
using detail::MessageWait;
using detail::RunInfo;

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
  out.reached_S = engine.reached_rendezvous();
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
    out.notes.push_back(fmt::format("{} collective calls kept their recorded duration (communicators too large for "
                                    "the replay's slots: rounds x ranks reach 2^31)",
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
  // A thread waiting on the watch must be let go whatever happens here: after an error it runs
  // its own replay (and meets the error itself).
  struct Release {
    RendezvousWatch* watch;
    bool reached = true;
    ~Release() {
      if (watch) watch->finished(reached);
    }
  } release{in.rendezvous_watch};
  ReplayResult r = replay(in, LogGPSCost{LogGPS{p}, cold, in.rendezvous_watch});
  release.reached = r.reached_S;
  detail::note_machine_terms(cold, r);
  if (p.S != kInfiniteBytes && p.rendezvous_model == RendezvousModel::Delivered)
    r.notes.push_back(fmt::format(
        "rendezvous from {} B as calibrated, not as MODELS.md: its handshake takes {:.3g} us beyond o + L + o, its "
        "bytes move once at Gl, MPI_Send returns when they are delivered, and a request-to-send is answered only "
        "inside MPI{}",
        p.S, p.H * 1e6, p.rendezvous_push ? " (the data, too, leaves only with its sender inside MPI)" : ""));
  return r;
}

void RendezvousWatch::reached() {
  std::lock_guard lock(mutex_);
  if (state_ == State::Running) state_ = State::Reached;
  changed_.notify_all();
}

void RendezvousWatch::finished(bool reached) {
  std::lock_guard lock(mutex_);
  if (state_ == State::Running) state_ = reached ? State::Reached : State::None;
  changed_.notify_all();
}

bool RendezvousWatch::wait() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return state_ != State::Running; });
  return state_ == State::Reached;
}

ReplayResult replay_linear(const ReplayInput& in, const TwoRegimeLinearModel& model, const ColdStart& cold) {
  ReplayResult r = replay(in, LinearModelCost{model, cold});
  detail::note_machine_terms(cold, r);
  return r;
}

}  // namespace mstep::model
