#include "model/analysis/activity.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>

#include "format/step_tracker.hpp"
#include "model/trace/rank_comms.hpp"
#include "model/analysis/report.hpp"
#include "model/replay/replay.hpp"
#include "model/trace/stream_pass.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model {
namespace {

// Adds the stretch [a, b) (seconds after the picture's zero) to `row` of `kind`, spread over the
// bins it covers; what lies outside [0, span) is cut off.
void add_span(const ActivityPicture& pic, std::vector<float>& kind, int row, double a, double b, double sign) {
  a = std::max(a, 0.0);
  b = std::min(b, pic.span_s);
  if (b <= a) return;
  const double bin_s = pic.span_s / pic.width;
  int bin = std::min(pic.width - 1, static_cast<int>(a / bin_s));
  while (a < b) {
    const double edge = bin + 1 >= pic.width ? b : std::min(b, (bin + 1) * bin_s);
    kind[pic.at(row, bin)] += static_cast<float>(sign * (edge - a));
    a = edge;
    ++bin;
  }
}

// A call's entry and exit, in seconds after zero, carried through the pass as a record's tag.
RecordTag tag_of(double enter, double exit) { return {std::bit_cast<std::uint64_t>(enter), std::bit_cast<std::uint64_t>(exit)}; }
double enter_of(RecordTag t) { return std::bit_cast<double>(t.a); }
double exit_of(RecordTag t) { return std::bit_cast<double>(t.b); }

class ActivityMeter final : public StreamVisitor {
 public:
  ActivityMeter(std::span<const RankTrace* const> metas, const Timeline& timeline, const ActivityOptions& o)
      : timeline_(timeline), ranks_(metas.size()) {
    const int P = static_cast<int>(metas.size());
    ActivityPicture& pic = picture_;
    pic.width = std::max(1, o.width);
    const int max_rows = std::max(1, o.max_rows);
    pic.ranks_per_row = std::max(1, (P + max_rows - 1) / max_rows);
    pic.rows = (P + pic.ranks_per_row - 1) / pic.ranks_per_row;
    pic.span_s = o.span_s > 0 ? o.span_s : 1e-9;
    const std::size_t cells = static_cast<std::size_t>(pic.rows) * static_cast<std::size_t>(pic.width);
    pic.compute.assign(cells, 0.0f);
    pic.mpi.assign(cells, 0.0f);
    pic.wait.assign(cells, 0.0f);
    pic.step_ends.resize(static_cast<std::size_t>(pic.rows));
    pic.steps.assign(static_cast<std::size_t>(pic.rows), 0);
    pic.steps_drawn.assign(static_cast<std::size_t>(pic.rows), true);
    max_ends_ = static_cast<std::uint64_t>(o.max_step_ends_per_bin * pic.width);
    double zero = std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < metas.size(); ++r)
      if (metas[r] && !metas[r]->events.empty())
        zero = std::min(zero, timeline.seconds(static_cast<int>(r), metas[r]->events.front().t_exit));
    pic.zero_s = std::isfinite(zero) ? zero : 0.0;
    for (std::size_t r = 0; r < metas.size(); ++r) {
      if (!metas[r] || metas[r]->events.empty()) continue;
      Rank& rs = ranks_[r];
      rs.comms = RankComms(metas[r]->comms);
      rs.tracker.emplace(static_cast<std::int32_t>(r), static_cast<std::int32_t>(P), metas[r]->events.front().t_enter,
                       /*reserve_partners=*/4);
    }
  }

  RecordTag record(std::int32_t rank, std::uint32_t, const Event& e) override {
    Rank& rs = ranks_[static_cast<std::size_t>(rank)];
    ++picture_.records;
    if (!e.continuation()) {
      const double enter = seconds(rank, e.t_enter), exit = std::max(enter, seconds(rank, e.t_exit));
      if (rs.started) add(rank, rs.last_exit, enter, picture_.compute, 1.0);
      if (op_role(e.op) != Role::Tool) add(rank, enter, exit, picture_.mpi, 1.0);
      rs.last_exit = exit;
      rs.started = true;
      rs.call = tag_of(enter, exit);
    }
    if (rs.tracker) {
      feed_step_tracker(*rs.tracker, e, rs.comms.find(e.comm));  // partner lists are not drawn
      rs.last_t_exit = e.t_exit;
      take_steps(rank);
    }
    return rs.call;
  }

  void message(const StreamedMessage& m) override {
    const double sent = enter_of(m.send_tag);
    if (m.single) {
      wait(m.message.dst, enter_of(m.recv_tag), exit_of(m.recv_tag), sent);
      return;
    }
    auto& open = ranks_[static_cast<std::size_t>(m.message.dst)].open;
    const auto [it, added] = open.try_emplace(m.done_call, OpenCall{enter_of(m.recv_tag), exit_of(m.recv_tag), sent});
    if (!added) it->second.latest_send = std::max(it->second.latest_send, sent);
  }

  void call_complete(std::int32_t rank, std::uint32_t call) override {
    auto& open = ranks_[static_cast<std::size_t>(rank)].open;
    const auto it = open.find(call);
    if (it == open.end()) return;
    wait(rank, it->second.enter, it->second.exit, it->second.latest_send);
    open.erase(it);
  }

  void collective(std::span<const StreamedMember> members) override {
    double last = -std::numeric_limits<double>::infinity();
    for (const StreamedMember& m : members) last = std::max(last, enter_of(m.tag));
    for (const StreamedMember& m : members) wait(m.rank, enter_of(m.tag), exit_of(m.tag), last);
  }

  void rank_end(std::int32_t rank, std::uint64_t records) override {
    Rank& rs = ranks_[static_cast<std::size_t>(rank)];
    if (rs.tracker && records > 0) {
      rs.tracker->finish(rs.last_t_exit);
      take_steps(rank);
    }
    rs.tracker.reset();
  }

  ActivityPicture take() { return std::move(picture_); }

 private:
  // A call that completed several receives: its wait is final once all of them are known.
  struct OpenCall {
    double enter = 0, exit = 0, latest_send = 0;
  };
  struct Rank {
    bool started = false;
    double last_exit = 0;
    RecordTag call;
    std::optional<StepTracker> tracker;
    std::uint64_t last_t_exit = 0;
    RankComms comms;
    std::unordered_map<std::uint32_t, OpenCall> open;  // by the call's first record
  };

  double seconds(std::int32_t rank, std::uint64_t ticks) const { return timeline_.seconds(rank, ticks) - picture_.zero_s; }
  int row_of(std::int32_t rank) const { return rank / picture_.ranks_per_row; }

  // The call [enter, exit] waited until `until` where that is later than its entry.
  void wait(std::int32_t rank, double enter, double exit, double until) {
    const double end = std::min(exit, until);
    if (end <= enter) return;
    add(rank, enter, end, picture_.wait, 1.0);
    add(rank, enter, end, picture_.mpi, -1.0);
  }

  void add(std::int32_t rank, double a, double b, std::vector<float>& kind, double sign) {
    add_span(picture_, kind, row_of(rank), a, b, sign);
  }

  void take_steps(std::int32_t rank) {
    Rank& rs = ranks_[static_cast<std::size_t>(rank)];
    const auto row = static_cast<std::size_t>(row_of(rank));
    for (const mstep::StepRecord& s : rs.tracker->closed()) {
      ++picture_.steps[row];
      if (!picture_.steps_drawn[row]) continue;
      if (picture_.steps[row] > max_ends_) {
        picture_.steps_drawn[row] = false;
        std::vector<float>().swap(picture_.step_ends[row]);
        continue;
      }
      picture_.step_ends[row].push_back(static_cast<float>(seconds(rank, s.end)));
    }
    rs.tracker->clear_closed();
    rs.tracker->trim(0);
  }

  const Timeline& timeline_;
  ActivityPicture picture_;
  std::vector<Rank> ranks_;
  std::uint64_t max_ends_ = 0;
};

// The replay's calls as computation (since the rank's previous exit) and MPI time.
class PredictionMeter final : public ReplayObserver {
 public:
  PredictionMeter(ActivityPicture& pic, std::vector<double> starts) : pic_(pic), last_exit_(std::move(starts)) {}
  void call(std::int32_t rank, Op, double entry_s, double exit_s) override {
    const int row = rank / pic_.ranks_per_row;
    double& last = last_exit_[static_cast<std::size_t>(rank)];
    const double entry = entry_s - pic_.zero_s, exit = std::max(entry, exit_s - pic_.zero_s);
    add_span(pic_, pic_.predicted_compute, row, last, entry, 1.0);
    add_span(pic_, pic_.predicted_mpi, row, entry, exit, 1.0);
    last = exit;
  }

 private:
  ActivityPicture& pic_;
  std::vector<double> last_exit_;  // per rank, seconds after zero
};

}  // namespace

void add_loggps_prediction(ActivityPicture& pic, const TraceDir& trace, const CalibrationParams& params) {
  if (!params.loggps) return;
  const auto [ranks, files] = stream_inputs(trace);
  const Timeline timeline(ranks);
  // Each rank starts at its MPI_Init exit, as in the replay (model/replay/replay.hpp).
  std::vector<double> starts(ranks.size(), 0.0);
  for (std::size_t r = 0; r < ranks.size(); ++r)
    if (ranks[r] && !ranks[r]->events.empty())
      starts[r] = timeline.seconds(static_cast<int>(r), ranks[r]->events.front().t_exit) - pic.zero_s;
  pic.predicted_compute.assign(pic.compute.size(), 0.0f);
  pic.predicted_mpi.assign(pic.compute.size(), 0.0f);
  PredictionMeter meter(pic, std::move(starts));
  observe_loggps(trace, params, meter);
}

void observe_loggps(const TraceDir& trace, const CalibrationParams& params, ReplayObserver& observer) {
  if (!params.loggps) return;
  const auto [ranks, files] = stream_inputs(trace);
  const Timeline timeline(ranks);
  const Matching none;
  const std::uint32_t window = streamed_window(ranks.size());
  ReplayInput input{ranks, none, timeline, window, files, substitutes_of(trace.meta)};
  input.observer = &observer;
  if (!params.collectives.empty()) input.collective_times = &params.collectives;  // as the report's LogGPS
  replay_loggps(input, *params.loggps, params.cold ? *params.cold : ColdStart{});
}

ActivityPicture measure_activity(std::span<const RankTrace* const> metas, std::span<const std::string> files,
                                 const ActivityOptions& options) {
  const Timeline timeline(std::vector<const RankTrace*>(metas.begin(), metas.end()));
  ActivityMeter meter(metas, timeline, options);
  const StreamPassResult pass = stream_pass(metas, files, timeline, meter);
  ActivityPicture pic = meter.take();
  pic.problems = pass.problems;
  return pic;
}

}  // namespace mstep::model
