#include "tools/mstep/validate_runs.hpp"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "model/analysis/report.hpp"
#include "model/analysis/speed_check.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/launcher.hpp"
#include "tools/mstep/output.hpp"

namespace mstep::cli {
namespace fs = std::filesystem;

namespace {

std::string run_name(const Planned& p, int repetition) {
  return fmt::format("{}-{}-n{}-r{}", p.c->name, p.size->label, p.ranks, repetition);
}

}  // namespace

CaseRuns::CaseRuns(const ValidateOptions& o, const Experiment& x, const Planned& p, int cores,
                   const std::string& calibration_error)
    : o_(o), x_(x), p_(p) {
  row_.experiment = x.label;
  row_.case_name = p.c->name;
  row_.size_label = p.size->label;
  row_.args = p.size->args;
  row_.ranks = p.ranks;
  row_.cores = cores;
  row_.oversubscribed = p.ranks > cores;
  what_ = fmt::format("{} {} at {} ranks{}", row_.case_name, row_.size_label, row_.ranks,
                      x.label.empty() ? "" : " [" + x.label + "]");
  if (!calibration_error.empty()) {
    row_.error = "not run: " + calibration_error;
    return;
  }
  program_ = program_path(p.c->program).string();
  std::error_code ec;
  if (!fs::exists(program_, ec)) fail_row(fmt::format("program {} not found", program_));
}

bool CaseRuns::done() const { return !row_.ok() || static_cast<int>(reps_.size()) >= o_.repeat; }

void CaseRuns::fail_row(std::string why) {
  row_.error = std::move(why);
  std::fprintf(stderr, "mstep: validate: %s failed: %s\n", what_.c_str(), row_.error.c_str());
}

void CaseRuns::record_next() {
  just_recorded_ = false;
  if (done()) return;
  const int i = static_cast<int>(reps_.size()) + 1;
  const fs::path traces = fs::path(o_.dir) / "traces" / x_.label, logs = fs::path(o_.dir) / "logs" / x_.label;
  std::error_code ec;
  fs::create_directories(traces, ec);
  fs::create_directories(logs, ec);
  const std::uint64_t S = x_.params.loggps ? x_.params.loggps->S : model::kInfiniteBytes;
  Repetition rep;
  rep.trace = (traces / run_name(p_, i)).string();
  const fs::path log = logs / (run_name(p_, i) + ".log");
  std::vector<std::string> command{default_launcher(), "-n", std::to_string(p_.ranks), program_};
  command.insert(command.end(), p_.size->args.begin(), p_.size->args.end());
  std::vector<std::string> argv{self_exe().string(), "record", "-f", "-o", rep.trace, "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  bool timed_out = false;
  int code = run_logged(argv, x_.env, log, o_.timeout_s, &timed_out);
  if (timed_out && !interrupted()) {
    // Most often a job whose ranks had finished and one of them hung in MPI_Finalize (UCX's TCP
    // transport): once more, in a new trace.
    std::fprintf(stderr, "mstep: validate: %s: repetition %d was still running after %g s: ended, and run again\n",
                 what_.c_str(), i, o_.timeout_s);
    code = run_logged(argv, x_.env, log, o_.timeout_s, &timed_out);
  }
  if (interrupted()) fail(130, "validate: interrupted");
  if (timed_out)
    return fail_row(fmt::format("'{}' was still running after {} s, twice (log {})", command_line(command),
                                o_.timeout_s, log.string()));
  if (code != 0)
    return fail_row(fmt::format("'{}' exited with code {} (log {})", command_line(command), code, log.string()));
  try {
    const TraceDir trace = load_trace_dir(rep.trace, std::nullopt, {}, false, /*with_steps=*/false);
    if (!trace.ok()) return fail_row(fmt::format("trace {}: {}", rep.trace, trace.problems.front()));
    const model::Report report = model::build_report(trace, &x_.params);
    if (!report.problems.empty()) return fail_row(fmt::format("trace {}: {}", rep.trace, report.problems.front()));
    rep.actual_s = report.actual_s;
    for (const auto& m : report.models)
      rep.predictions.push_back({m.name, m.available, m.available ? m.predicted_s : model::kNaN,
                                 m.available ? m.error_pct : model::kNaN, m.note});
    rep.sizes = model::sizes_around(trace, S);
    rep.probe = model::probed_latency(trace, model::calibrated_on_one_host(x_.params));
    rep.other_period = model::run_speed_difference(rep.probe, x_.params).has_value();
  } catch (const std::exception& e) {
    return fail_row(fmt::format("trace {}: {}", rep.trace, e.what()));
  }
  std::fprintf(stderr, "mstep: validate: %s: repetition %d/%d: %.6f s\n", what_.c_str(), i, o_.repeat, rep.actual_s);
  row_.repetitions_s.push_back(rep.actual_s);
  row_.repetition_traces.push_back(rep.trace);
  reps_.push_back(std::move(rep));
  just_recorded_ = true;
}

model::ValidationRow CaseRuns::finish() {
  if (!row_.ok() || reps_.empty()) return row_;
  row_.chosen = model::median_index(row_.repetitions_s);
  const Repetition& kept = reps_[row_.chosen];
  row_.actual_s = kept.actual_s;
  row_.sizes = kept.sizes;
  row_.trace = kept.trace;
  row_.probe_init_s = kept.probe.at_init_s;
  row_.probe_finalize_s = kept.probe.at_finalize_s;
  row_.other_period = kept.other_period;
  for (const auto name : model::kValidatedModels) {
    model::Prediction pr{std::string(name), false, model::kNaN, model::kNaN, "not in the report"};
    for (const auto& m : kept.predictions)
      if (m.model == name) pr = m;
    row_.predictions.push_back(std::move(pr));
  }
  return row_;
}

std::vector<const model::CalibrationParams*> Experiment::calibrations() const {
  std::vector<const model::CalibrationParams*> all{&params};
  for (const Calibration& c : during) all.push_back(&c.params);
  if (after) all.push_back(&*after);
  return all;
}

std::string Experiment::file_of(std::size_t calibration) const {
  if (calibration == 0) return params_file;
  if (calibration <= during.size()) return during[calibration - 1].file;
  return after_file;
}

std::optional<double> out_of_every_period(const Experiment& x, const std::string& trace) {
  try {
    const model::PeriodMatch m =
        model::choose_by_period(load_trace_dir(trace, std::nullopt, {}, /*metadata_only=*/true), x.calibrations());
    if (m.by_probe && !m.in_period) return m.run_s;
  } catch (const std::exception&) {
    // read once already: the row says what is wrong with it
  }
  return std::nullopt;
}

void repredict_in_period(Experiment& x) {
  const std::vector<const model::CalibrationParams*> all = x.calibrations();
  if (all.size() < 2) return;
  for (model::ValidationRow& row : x.rows) {
    if (!row.ok() || row.trace.empty()) continue;
    try {
      // The clock samples decide (metadata); the records are read only for a row predicted again.
      const std::size_t chosen =
          model::choose_by_period(load_trace_dir(row.trace, std::nullopt, {}, /*metadata_only=*/true), all).index;
      if (chosen == 0) continue;
      const model::CalibrationParams& params = *all[chosen];
      const TraceDir trace = load_trace_dir(row.trace, std::nullopt, {}, false, /*with_steps=*/false);
      const model::Report report = model::build_report(trace, &params);
      if (!report.problems.empty()) continue;  // the row keeps the first calibration's numbers
      for (model::Prediction& p : row.predictions)
        for (const auto& m : report.models)
          if (m.name == p.model)
            p = {m.name, m.available, m.available ? m.predicted_s : model::kNaN, m.available ? m.error_pct : model::kNaN,
                 m.note};
      row.params_after = x.after && &params == &*x.after;
      row.params_during = !row.params_after;
      row.params_file = x.file_of(chosen);
      const model::ProbedLatency probe = model::probed_latency(trace, model::calibrated_on_one_host(params));
      row.other_period = model::run_speed_difference(probe, params).has_value();
    } catch (const std::exception&) {
      // Read once already: a trace that cannot be read again keeps its first numbers.
    }
  }
}

}  // namespace mstep::cli
