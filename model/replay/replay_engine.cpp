// The replay engine's setup (the ranks' windows and starts) and the reading of records a window
// at a time (replay_engine.hpp).
#include "model/replay/replay_engine.hpp"

#include "format/rank_trace.hpp"

namespace mstep::model::detail {

namespace {

// A rank file read an Events frame at a time (ReplayInput::files), handed to the replay `step`
// records at a time: the window stays small however large the recorder's frames (linking far
// ahead of the replay only fills the channels).
class FileSource final : public detail::RecordSource {
 public:
  FileSource(const std::string& path, std::uint32_t step)
      : reader_(path, std::max<std::uint32_t>(step, 1)), step_(std::max<std::uint32_t>(step, 1)) {}
  bool read(detail::BigVector<Event>& out) override {
    if (at_ == frame_.size()) {
      frame_.clear();
      at_ = 0;
      if (!reader_.read(frame_)) return false;
    }
    const std::size_t k = std::min<std::size_t>(step_, frame_.size() - at_);
    out.insert(out.end(), frame_.begin() + static_cast<std::ptrdiff_t>(at_), frame_.begin() + static_cast<std::ptrdiff_t>(at_ + k));
    at_ += k;
    return true;
  }

 private:
  RankEventReader reader_;
  std::uint32_t step_;
  std::vector<Event> frame_;  // the frame being handed out
  std::size_t at_ = 0;
};

}  // namespace

template <class Cost>
Engine<Cost>::Engine(const ReplayInput& in, RunInfo& run, const Cost& cost, ReplayResult& out)
    : run_(run), linker_(run), cost_(cost), out_(out), collect_waits_(in.window == 0), observer_(in.observer) {
  const std::size_t P = run.ranks.size();
  states_.resize(P);
  windows_.resize(P);
  ready_.reserve(P);
  cold_on_ = cost.cold().any();
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
        loaded_.push_back(std::make_unique<RankTrace>(read_rank_trace(in.files[r])));
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
      w.source = std::make_unique<FileSource>(in.files[r], in.window);
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
  // Read whole: what is left in a channel was never received (or never sent).
  if (std::none_of(windows_.begin(), windows_.end(), [](const RankWindow& w) { return w.more(); }))
    linker_.unlink_unmatched(windows_);
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
void Engine<Cost>::note_read(RankState& s, std::uint32_t from) {
  const RankWindow& w = *s.w;
  for (std::uint32_t i = from; i < w.end(); ++i) {
    const Event& e = w.ev[i - w.base];
    if (e.op == Op::Finalize) s.finalize_seen = true, s.finalize_enter = e.t_enter;
  }
  if (w.end() > from) s.last_record_exit = w.ev[w.end() - 1 - w.base].t_exit;
  s.records = w.end();
}

template <class Cost>
void Engine<Cost>::load(std::uint32_t r) {
  RankWindow& w = windows_[r];
  RankState& s = states_[r];
  if (!w.more()) return;
  const std::uint32_t keep = std::min(s.mode == Mode::InCall ? s.first : s.pos, linker_.linked_end(r, w));
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

#define MSTEP_MEMBERS(COST) \
  template Engine<COST>::Engine(const ReplayInput& in, RunInfo& run, const COST& cost, ReplayResult& out); \
  template void Engine<COST>::note_read(RankState& s, std::uint32_t from); \
  template void Engine<COST>::load(std::uint32_t r);
MSTEP_REPLAY_INSTANTIATE(MSTEP_MEMBERS)

}  // namespace mstep::model::detail
