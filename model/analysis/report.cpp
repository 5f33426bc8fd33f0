#include "model/analysis/report.hpp"
#include "model/analysis/report_parts.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/analysis/threads.hpp"
#include "model/trace/matching.hpp"
#include "model/replay/replay.hpp"
#include "model/trace/step_alignment.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model {
namespace {

using detail::kMaxUnmatchedShown;
using detail::missing;
using detail::result;

// Ranks that called MPI from several threads: what holds is said, what does not is not computed.
void report_multithreaded(Report& rep, const std::vector<int>& threaded, const std::vector<const RankTrace*>& ranks,
                          const Matching& matching, const Timeline& timeline) {
  // Time in MPI: a multi-threaded rank's instants with any thread inside MPI, each counted once.
  for (const int r : threaded) {
    const RankTrace& t = *ranks[static_cast<std::size_t>(r)];
    for (const Event& e : t.events)
      if (!e.continuation() && e.op != Op::ToolFlush && e.op != Op::Init && e.op != Op::Init_thread && e.op != Op::Finalize)
        rep.mpi_s -= timeline.duration(r, e.t_exit - e.t_enter);
    rep.mpi_s += mpi_wall_seconds(t, timeline, r);
  }
  const std::string why = fmt::format(
      "not available for multi-threaded ranks: rank{} {} made MPI calls from several threads, and the "
      "model replays one sequence of calls per rank", threaded.size() == 1 ? "" : "s", fmt::join(threaded, ", "));
  for (const char* name : {"MPM", "BSPWB", "LogGP", "LogGPS", "linear"}) rep.models.push_back(missing(name, why));
  rep.notes.push_back(fmt::format(
      "MPI_THREAD_MULTIPLE: rank{} {} made MPI calls from several threads. What holds: calls, bytes and "
      "time per function (summed over threads), messages matched, the wait hotspots, and time in MPI "
      "(an instant with any thread inside MPI counted once). What does not: the model predictions and "
      "the M-steps, which assume one thread of MPI calls per rank",
      threaded.size() == 1 ? "" : "s", fmt::join(threaded, ", ")));
  rep.waits = measure_waits(ranks, matching, timeline, WaitOptions{});
}

}  // namespace

Report build_report(const TraceDir& trace, const CalibrationParams* params) {
  Report rep;
  rep.trace = trace.path;
  rep.ranks = static_cast<int>(trace.ranks.size());
  const TraceCompleteness completeness = trace_completeness(trace);
  rep.complete = completeness.complete;
  rep.finalized_ranks = completeness.complete_ranks;
  rep.problems = trace.problems;

  std::vector<const RankTrace*> ranks;
  for (const auto& r : trace.ranks) ranks.push_back(r ? &*r : nullptr);
  const Timeline timeline(ranks);
  for (const int r : timeline.unplaced())
    rep.problems.push_back(fmt::format(
        "rank {}: no clock samples in its trace; placed on the common timeline by its MPI_Init exit "
        "(its times relative to other ranks are approximate)", r));
  const Matching matching = match_messages(ranks);
  rep.messages = matching.messages.size();
  for (std::size_t i = 0; i < matching.unmatched.size() && i < kMaxUnmatchedShown; ++i)
    rep.problems.push_back(matching.unmatched[i].what);
  if (matching.unmatched.size() > kMaxUnmatchedShown)
    rep.problems.push_back(fmt::format("{} more unmatched messages", matching.unmatched.size() - kMaxUnmatchedShown));

  // Time in MPI per function (summed as the streamed report sums it: ExactSeconds).
  detail::MeasuredTimes times;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r]) continue;
    for (const Event& e : ranks[r]->events) times.add(rep, timeline, static_cast<int>(r), e);
  }
  times.finish(rep);

  AlignedSteps aligned = align_steps(ranks, matching, timeline);
  rep.actual_s = aligned.actual_s;
  rep.rank_actual_s = aligned.rank_actual_s;
  if (const auto threaded = multithreaded_ranks(ranks); !threaded.empty()) {
    report_multithreaded(rep, threaded, ranks, matching, timeline);
    return rep;
  }

  // The event-driven replays of every rank's recorded sequence. The LogGPS replay goes first:
  // the machine terms it charges (cold start, fresh buffers) are charged to the step models too.
  const ReplayInput input{ranks, matching, timeline, kReplayWindow, {}, substitutes_of(trace.meta)};
  const ColdStart cold = params && params->cold ? *params->cold : ColdStart{};
  std::optional<ModelResult> loggp_result, loggps_result, linear_result;
  if (params && params->loggps) {
    // LogGP and LogGPS pay the collectives' calibrated residuals (the linear baseline does not).
    ReplayInput measured = input;
    if (!params->collectives.empty()) measured.collective_times = &params->collectives;
    FunctionTimes per_function(rep.mpi);
    ReplayInput observed = measured;
    observed.observer = &per_function;
    const ReplayResult loggps = replay_loggps(observed, *params->loggps, cold);
    per_function.finish();
    rep.has_loggps_functions = true;
    // LogGP is LogGPS with S infinite: the same replay where no message reached S.
    const double loggp_s =
        loggps.reached_S ? replay_loggps(measured, as_loggp(*params->loggps), cold).predicted_s : loggps.predicted_s;
    loggp_result = result("LogGP", rep.actual_s, loggp_s);
    loggps_result = result("LogGPS", rep.actual_s, loggps.predicted_s);
    rep.loggps_rank_s = loggps.finish_s;
    rep.collective_algorithms = loggps.collective_algorithms;
    for (const auto& n : loggps.notes) rep.notes.push_back("LogGPS replay: " + n);
    add_machine_terms(aligned, loggps.machine_charges);
    if (!loggps.machine_charges.empty())
      rep.notes.push_back("MPM, BSPWB and linear: charged the same cold-start and fresh-buffer terms");
  } else {
    loggp_result = missing("LogGP", "needs the LogGPS parameters (L, o, g, G, s, S)");
    loggps_result = missing("LogGPS", "needs the LogGPS parameters (L, o, g, G, s, S)");
  }
  if (params && params->linear)
    linear_result = result("linear", rep.actual_s, replay_linear(input, params->linear->model, cold).predicted_s);
  else
    linear_result = missing("linear", "needs the linear parameters (T0, B)");

  // MPM and BSPWB from the aligned steps.
  std::optional<MpmPrediction> mpm_prediction;
  if (params && params->mpm) {
    const BspParams bsp = params->mpm->bsp();
    try {
      mpm_prediction = mpm(aligned.input, bsp, aligned.groups);
      rep.models.push_back(result("MPM", rep.actual_s, mpm_prediction->psi));
    } catch (const std::exception& e) {
      rep.models.push_back(missing("MPM", fmt::format("the steps could not be ordered: {}", e.what())));
    }
    rep.models.push_back(result("BSPWB", rep.actual_s, bspwb(aligned.input, bsp).total));
  } else {
    rep.models.push_back(missing("MPM", "needs mpm.g and mpm.L"));
    rep.models.push_back(missing("BSPWB", "needs mpm.g and mpm.L"));
  }
  rep.models.push_back(std::move(*loggp_result));
  rep.models.push_back(std::move(*loggps_result));
  rep.models.push_back(std::move(*linear_result));

  for (const auto& steps : aligned.steps) rep.step_count += steps.size();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const auto& steps = aligned.steps[r];
    for (std::size_t s = 0; s < steps.size(); ++s) {
      StepRow row;
      row.rank = static_cast<std::int32_t>(r);
      row.step = static_cast<std::uint32_t>(s + 1);
      row.actual_end_s = aligned.actual_end_s[r][s];
      row.mpm_end_s = mpm_prediction ? mpm_prediction->phi[r][s] : std::numeric_limits<double>::quiet_NaN();
      row.error_pct = mpm_prediction && row.actual_end_s > 0 ? error_pct(row.actual_end_s, row.mpm_end_s)
                                                             : std::numeric_limits<double>::quiet_NaN();
      row.actual_s = row.actual_end_s - (s > 0 ? aligned.actual_end_s[r][s - 1] : 0.0);
      row.mpm_s = row.mpm_end_s - (s > 0 && mpm_prediction ? mpm_prediction->phi[r][s - 1] : 0.0);
      row.miss_s = row.mpm_s - row.actual_s;
      row.step_error_pct = mpm_prediction && row.actual_s > 0 ? error_pct(row.actual_s, row.mpm_s)
                                                              : std::numeric_limits<double>::quiet_NaN();
      row.compute_s = timeline.duration(static_cast<int>(r), steps[s].compute);
      row.mpi_s = timeline.duration(static_cast<int>(r), steps[s].mpi);
      row.bytes_in = steps[s].bytes_in;
      row.bytes_out = steps[s].bytes_out;
      row.partners = steps[s].partners;
      if (steps[s].whole_comm != kNoWholeComm && ranks[r])
        if (const CommDef* c = find_comm(ranks[r]->comms, steps[s].whole_comm)) row.partners_all_of = c->world_ranks;
      rep.steps.push_back(std::move(row));
    }
  }

  WaitOptions options;
  if (params && params->loggps) {
    options.loggps = params->loggps;
    options.rendezvous_bytes = params->loggps->S;
  } else {
    rep.notes.push_back(fmt::format(
        "late-receiver waits assume rendezvous from {} bytes (MPICH ch4 shared memory); calibrate to measure S",
        options.rendezvous_bytes));
  }
  rep.waits = measure_waits(ranks, matching, timeline, options);
  if (!params)
    rep.notes.push_back(fmt::format("no model parameters: run `mstep calibrate -o {}/params.json`, or pass --params FILE",
                                    trace.path));
  return rep;
}

}  // namespace mstep::model
