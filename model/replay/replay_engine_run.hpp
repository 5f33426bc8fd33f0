// The replay engine (model/replay/replay_engine.hpp): its setup, its loop, and the reading of each
// rank's records a window at a time.
#pragma once

#include <algorithm>
#include <memory>

#include "model/replay/file_source.hpp"
#include "model/replay/replay_engine.hpp"

namespace mstep::model::detail {
namespace {  // internal linkage: see replay_engine.hpp

template <class Cost>
Engine<Cost>::Engine(const ReplayInput& in, RunInfo& run, const Cost& cost, ReplayResult& out)
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

template <class Cost>
inline void Engine<Cost>::run() {
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

template <class Cost>
inline void Engine<Cost>::note_read(RankState& s, std::uint32_t from) {
  const RankWindow& w = *s.w;
  for (std::uint32_t i = from; i < w.end(); ++i) {
    const Event& e = w.ev[i - w.base];
    if (e.op == Op::Finalize) s.finalize_seen = true, s.finalize_enter = e.t_enter;
  }
  if (w.end() > from) s.last_record_exit = w.ev[w.end() - 1 - w.base].t_exit;
  s.records = w.end();
}

// Reads the next window of rank r, dropping the records it is through with.
template <class Cost>
inline void Engine<Cost>::load(std::uint32_t r) {
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
template <class Cost>
inline bool Engine<Cost>::have(RankState& s, std::uint32_t p) {
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
}  // namespace
}  // namespace mstep::model::detail
