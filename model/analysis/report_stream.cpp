// build_report_streamed: the report of a trace too large to hold, from one streaming pass over
// its rank files (model/trace/stream_pass.hpp) and the replays read a frame at a time.
#include <algorithm>
#include <cmath>
#include <future>
#include <limits>
#include <optional>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <fmt/format.h>

#include "model/analysis/free_memory.hpp"
#include "model/analysis/report.hpp"
#include "model/analysis/report_parts.hpp"
#include "model/analysis/steps_stream.hpp"
#include "model/replay/replay.hpp"
#include "model/trace/stream_pass.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model {
namespace {

using detail::kMaxUnmatchedShown;
using detail::missing;
using detail::result;

// What the report takes from each record, message and collective as the pass hands them.
class ReportVisitor final : public StreamVisitor {
 public:
  ReportVisitor(Report& rep, const Timeline& tl, const WaitOptions& options, std::size_t ranks, StepStream& steps)
      : rep_(rep), tl_(tl), meter_(tl, options), steps_(steps), end_(ranks), last_(ranks) {}

  RecordTag record(std::int32_t rank, std::uint32_t index, const Event& e) override {
    const RecordTag tag = steps_.record(rank, index, e);
    measured_.add(rep_, tl_, rank, e);
    const auto r = static_cast<std::size_t>(rank);
    last_[r] = e;
    if (e.op == Op::Finalize) end_[r] = e.t_enter;
    return tag;
  }
  void message(const StreamedMessage& m) override {
    meter_.message(m);
    steps_.message(m);
  }
  void unmatched(std::int32_t rank, std::uint32_t, RecordTag tag) override { steps_.unmatched(rank, tag); }
  void call_complete(std::int32_t rank, std::uint32_t call) override { meter_.call_complete(rank, call); }
  void collective(std::span<const StreamedMember> members) override {
    meter_.collective(members);
    steps_.collective(members);
  }
  void rank_end(std::int32_t rank, std::uint64_t records) override {
    steps_.rank_end(rank, records);
    const auto r = static_cast<std::size_t>(rank);
    if (records == 0) return;
    // The run ends where MPI_Finalize begins (or with the last record of an unfinished trace).
    if (!end_[r]) end_[r] = last_[r]->t_exit;
  }

  WaitMeter& meter() { return meter_; }
  // The measured times per function, once every record is in.
  void finish() { measured_.finish(rep_); }
  // Per rank: the end of its run (nullopt: no records), and its last record.
  const std::vector<std::optional<std::uint64_t>>& ends() const { return end_; }
  const std::vector<std::optional<Event>>& last() const { return last_; }

 private:
  Report& rep_;
  const Timeline& tl_;
  WaitMeter meter_;
  StepStream& steps_;
  detail::MeasuredTimes measured_;
  std::vector<std::optional<std::uint64_t>> end_;
  std::vector<std::optional<Event>> last_;
};

// This thread only (Linux gives each thread its own nice value); nothing where that fails.
void lower_thread_priority() {
#ifdef __linux__
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  (void)::setpriority(PRIO_PROCESS, tid, std::min(::getpriority(PRIO_PROCESS, tid) + 10, 19));
#endif
}

}  // namespace

StreamInputs stream_inputs(const TraceDir& trace) {
  StreamInputs in;
  in.files.resize(trace.ranks.size());
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    in.ranks.push_back(trace.ranks[r] ? &*trace.ranks[r] : nullptr);
    if (trace.ranks[r]) in.files[r] = trace.ranks[r]->path;
  }
  return in;
}

std::vector<WaitSite> measure_waits_streamed(const TraceDir& trace, const WaitOptions& options) {
  const auto [ranks, files] = stream_inputs(trace);
  const Timeline timeline(ranks);
  struct Waits final : StreamVisitor {
    explicit Waits(WaitMeter& m) : meter(m) {}
    WaitMeter& meter;
    void message(const StreamedMessage& m) override { meter.message(m); }
    void call_complete(std::int32_t rank, std::uint32_t call) override { meter.call_complete(rank, call); }
    void collective(std::span<const StreamedMember> members) override { meter.collective(members); }
  };
  WaitMeter meter(timeline, options);
  Waits visitor(meter);
  stream_pass(ranks, files, timeline, visitor);
  return meter.sites();
}

bool can_stream(const TraceDir& trace) {
  for (const auto& r : trace.ranks) {
    if (!r) continue;
    if (r->several_threads) return false;
    for (const CommDef& c : r->comms)
      if (c.inter) return false;
  }
  return true;
}

Report build_report_streamed(const TraceDir& trace, const CalibrationParams* params, std::size_t keep_steps,
                              unsigned jobs) {
  Report rep;
  rep.streamed = true;
  rep.trace = trace.path;
  rep.ranks = static_cast<int>(trace.ranks.size());
  rep.problems = trace.problems;

  const auto [ranks, files] = stream_inputs(trace);
  const Timeline timeline(ranks);
  for (const int r : timeline.unplaced())
    rep.problems.push_back(fmt::format(
        "rank {}: no clock samples in its trace; placed on the common timeline by its MPI_Init exit "
        "(its times relative to other ranks are approximate)", r));

  // The replays first, each reading the rank files a frame at a time: the LogGPS replay's machine
  // terms (cold start, fresh buffers) are charged to the step models too, as build_report does.
  const Matching none;
  const std::uint32_t window = streamed_window(ranks.size());
  const ReplayInput input{ranks, none, timeline, window, files, substitutes_of(trace.meta)};
  const ColdStart cold = params && params->cold ? *params->cold : ColdStart{};
  // LogGP and LogGPS pay the collectives' calibrated residuals (the linear baseline does not).
  ReplayInput measured = input;
  if (params && !params->collectives.empty()) measured.collective_times = &params->collectives;
  std::vector<MachineCharge> charges;
  std::vector<double> loggp_s, loggps_s, linear_s;
  // LogGP and linear need nothing of the rest: with two jobs they run beside LogGPS and the pass,
  // which take longer: those two then read their files ahead (where that pays, few ranks) on
  // what the job beside leaves of its core; LogGP and linear read their own.
  const bool beside_job = jobs > 1 && params && (params->loggps || params->linear);
  // LogGP is LogGPS with S infinite: where no message reaches S the two replays take the same
  // steps, so LogGP runs only once the LogGPS replay has seen one (the watch says so at once, or
  // at its end); NetPIPE's 106 M records up to 4 KiB were replayed twice for one answer.
  RendezvousWatch watch;
  const auto replay_loggp = [&](bool beside) {
    ReplayInput loggp_in = measured;
    loggp_in.read_ahead = !beside;
    loggp_s = {replay_loggps(loggp_in, as_loggp(*params->loggps), cold).predicted_s};
  };
  auto others = [&] {
    // The LogGPS replay and then the pass are the run's length; these two finish seconds before
    // them. At a lower priority they leave the cores to that chain where threads outnumber cores
    // (NetPIPE's 53 M records, 2 cores: 10.3-12.4 s, median 10.6, against 10.9-12.1, median 11.2).
    if (beside_job) lower_thread_priority();
    ReplayInput linear_in = input;
    linear_in.read_ahead = !beside_job;
    if (params && params->linear) linear_s = {replay_linear(linear_in, params->linear->model, cold).predicted_s};
    if (beside_job && params && params->loggps && watch.wait()) replay_loggp(true);
  };
  std::future<void> beside;
  // Whatever this thread meets before its LogGPS replay tells the watch, the job beside is let go
  // before the future's destructor waits for it.
  struct LetGo {
    RendezvousWatch& watch;
    ~LetGo() { watch.finished(true); }
  } let_go{watch};
  if (beside_job) beside = std::async(std::launch::async, others);
  else others();  // before the pass, whose M-steps and waits would be held through these replays
  if (params && params->loggps) {
    FunctionTimes per_function(rep.mpi);
    ReplayInput observed = measured;
    observed.observer = &per_function;
    if (beside_job) observed.rendezvous_watch = &watch;
    ReplayResult loggps = replay_loggps(observed, *params->loggps, cold);
    if (!beside_job && loggps.reached_S) replay_loggp(false);
    per_function.finish();
    rep.has_loggps_functions = true;
    loggps_s = {loggps.predicted_s};
    rep.loggps_rank_s = loggps.finish_s;
    rep.collective_algorithms = loggps.collective_algorithms;
    for (const auto& n : loggps.notes) rep.notes.push_back("LogGPS replay: " + n);
    charges = std::move(loggps.machine_charges);
    if (!charges.empty()) rep.notes.push_back("MPM, BSPWB and linear: charged the same cold-start and fresh-buffer terms");
  }

  // The replays' memory is free now: the pass's peak is the report's (its state a rank).
  return_free_memory();
  WaitOptions options;
  if (params && params->loggps) {
    options.loggps = params->loggps;
    options.rendezvous_bytes = params->loggps->S;
  }
  std::optional<BspParams> bsp;
  if (params && params->mpm) bsp = params->mpm->bsp();
  StepStream steps(ranks, timeline, bsp ? &*bsp : nullptr, charges, keep_steps);
  ReportVisitor visitor(rep, timeline, options, ranks.size(), steps);
  const StreamPassResult pass = stream_pass(ranks, files, timeline, visitor);
  visitor.finish();
  StreamedSteps stepped = steps.finish();
  if (beside.valid()) beside.get();  // rethrows what the other job threw
  rep.messages = pass.messages;
  for (std::size_t i = 0; i < pass.unmatched.size() && i < kMaxUnmatchedShown; ++i)
    rep.problems.push_back(pass.unmatched[i].what);
  if (pass.unmatched.size() > kMaxUnmatchedShown)
    rep.problems.push_back(fmt::format("{} more unmatched messages", pass.unmatched.size() - kMaxUnmatchedShown));
  for (std::size_t i = 0; i < pass.problems.size(); ++i)
    if (damage_is_new(trace, static_cast<std::size_t>(pass.damaged[i])))
      rep.problems.push_back(pass.problems[i] + " (the events before it are kept)");

  // Completeness: a rank whose file broke off in a frame the metadata read skipped is corrupt.
  const TraceCompleteness completeness = trace_completeness(trace, pass.damaged);
  rep.complete = completeness.complete;
  rep.finalized_ranks = completeness.complete_ranks;

  // Actual times as align_steps measures them: from the earliest MPI_Init exit.
  double zero = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < ranks.size(); ++r)
    if (ranks[r] && !ranks[r]->events.empty())
      zero = std::min(zero, timeline.seconds(static_cast<int>(r), ranks[r]->events.front().t_exit));
  if (!std::isfinite(zero)) zero = 0;
  rep.rank_actual_s.assign(ranks.size(), 0.0);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const auto& end = visitor.ends()[r];
    if (!end) continue;
    rep.rank_actual_s[r] = timeline.seconds(static_cast<int>(r), *end) - zero;
    rep.actual_s = std::max(rep.actual_s, rep.rank_actual_s[r]);
    const auto& last = visitor.last()[r];
    if (last && last->op == Op::Abort)
      rep.problems.push_back(fmt::format("{}: the rank called MPI_Abort (error code {}): the run was aborted",
                                         files[r], last->tag));
  }

  if (bsp) {
    if (stepped.mpm_psi) rep.models.push_back(result("MPM", rep.actual_s, *stepped.mpm_psi));
    else rep.models.push_back(missing("MPM", fmt::format("the steps could not be ordered: {}", stepped.mpm_problem)));
    rep.models.push_back(result("BSPWB", rep.actual_s, stepped.bspwb_total.value_or(0.0)));
  } else {
    rep.models.push_back(missing("MPM", "needs mpm.g and mpm.L"));
    rep.models.push_back(missing("BSPWB", "needs mpm.g and mpm.L"));
  }
  if (params && params->loggps) {
    if (loggp_s.empty()) loggp_s = loggps_s;  // no message reached S: LogGP's replay is LogGPS's
    rep.models.push_back(result("LogGP", rep.actual_s, loggp_s.front()));
    rep.models.push_back(result("LogGPS", rep.actual_s, loggps_s.front()));
  } else {
    rep.models.push_back(missing("LogGP", "needs the LogGPS parameters (L, o, g, G, s, S)"));
    rep.models.push_back(missing("LogGPS", "needs the LogGPS parameters (L, o, g, G, s, S)"));
  }
  if (!linear_s.empty()) rep.models.push_back(result("linear", rep.actual_s, linear_s.front()));
  else rep.models.push_back(missing("linear", "needs the linear parameters (T0, B)"));
  rep.step_count = stepped.steps;
  rep.steps = std::move(stepped.rows);

  rep.waits = visitor.meter().sites();
  rep.notes.push_back(fmt::format(
      "streamed: {} records read a frame at a time, with at most {} send{} and receive{} waiting for their match "
      "and {} M-steps held{}",
      pass.records, pass.peak_in_flight, pass.peak_in_flight == 1 ? "" : "s", pass.peak_in_flight == 1 ? "" : "s",
      stepped.peak_steps_held,
      keep_steps == 0 ? std::string()
                      : fmt::format("; the step table lists the {} of {} steps {}", rep.steps.size(), rep.step_count,
                                    bsp ? "whose MPM prediction misses by the most time"
                                        : "that end first (no MPM prediction to rank them by)")));
  if (!(params && params->loggps))
    rep.notes.push_back(fmt::format(
        "late-receiver waits assume rendezvous from {} bytes (MPICH ch4 shared memory); calibrate to measure S",
        options.rendezvous_bytes));
  if (!params)
    rep.notes.push_back(fmt::format("no model parameters: run `mstep calibrate -o {}/params.json`, or pass --params FILE",
                                    trace.path));
  return rep;
}

}  // namespace mstep::model
