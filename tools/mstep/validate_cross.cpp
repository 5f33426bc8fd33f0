#include "tools/mstep/validate_cross.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/analysis/report.hpp"
#include "model/analysis/whatif.hpp"

namespace mstep::cli {

namespace {

// All ranks' time outside MPI from MPI_Init's exit to MPI_Finalize's entry: the ranks' spans less
// their time in MPI and in trace flushes. Report::mpi_s counts neither MPI_Init nor MPI_Finalize:
// both lie outside the spans (each from the first rank's MPI_Init exit; the ranks leave MPI_Init
// together). Until stop 42 their time was subtracted from mpi_s once more, which added MPI_Init's
// 0.1-0.25 s a rank to the computation of runs of 15 ms and made that column MPI_Init's.
double computation_s(const model::Report& r) {
  double span = 0;
  for (double s : r.rank_actual_s) span += s;
  return span - r.mpi_s - r.tool_s;
}

// The computation of a run's trace; NaN if it cannot be read.
double computation_of(const std::string& trace) {
  try {
    return computation_s(model::build_report(load_trace_dir(trace, std::nullopt, {}, false, /*with_steps=*/false), nullptr));
  } catch (const std::exception&) {
    return model::kNaN;
  }
}

// Of a transport's calibrations, the one of `trace_dir`'s period; `file` is its file. A trace that
// cannot be read takes the first.
const model::CalibrationParams& in_period(const TransportRuns& t, const std::string& trace_dir, std::string& file) {
  std::size_t chosen = 0;
  if (t.calibrations.size() > 1) {
    try {
      const TraceDir trace = load_trace_dir(trace_dir, std::nullopt, {}, /*metadata_only=*/true);
      chosen = model::choose_by_period(trace, t.calibrations).index;
    } catch (const std::exception&) {
    }
  }
  file = chosen < t.files.size() ? t.files[chosen] : std::string();
  return *t.calibrations[chosen];
}

// The recording `trace_dir` of `recorded` predicted for the other transport, against a real run
// there (`there_dir`) of `actual_to_s`, each side with the calibration of its run's period;
// `computation` gets the recording's (it does not depend on the parameters), NaN where the
// prediction failed.
CrossRow predict(const std::string& trace_dir, const model::ValidationRow& recorded, const TransportRuns& from,
                 double actual_to_s, const std::string& there_dir, const TransportRuns& to, double& computation) {
  CrossRow c;
  c.case_name = recorded.case_name, c.size_label = recorded.size_label, c.ranks = recorded.ranks;
  c.from = from.name, c.to = to.name;
  c.actual_to_s = actual_to_s;
  c.loggps_s = c.mpm_s = c.loggps_error_pct = c.mpm_error_pct = c.compute_diff_pct = computation = model::kNaN;
  c.computation_s = c.computation_there_s = model::kNaN;
  try {
    const model::CalibrationParams& from_params = in_period(from, trace_dir, c.from_params);
    const model::CalibrationParams& to_params = in_period(to, there_dir, c.to_params);
    const model::EditedParams net = model::adopt_network(from_params, to_params, c.to_params);
    const TraceDir trace = load_trace_dir(trace_dir, std::nullopt, {}, false, /*with_steps=*/false);
    const model::Report rep = model::build_report(trace, &net.params);
    for (const auto& m : rep.models) {
      if (!m.available) continue;
      const double err = 100 * (c.actual_to_s - m.predicted_s) / c.actual_to_s;
      if (m.name == "LogGPS") c.loggps_s = m.predicted_s, c.loggps_error_pct = err;
      if (m.name == "MPM") c.mpm_s = m.predicted_s, c.mpm_error_pct = err;
    }
    computation = computation_s(rep);
  } catch (const std::exception& e) {
    c.error = e.what();
  }
  return c;
}

double computation_diff(double recorded, double there) {
  return std::isfinite(recorded) && there > 0 ? 100 * (recorded - there) / there : model::kNaN;
}

// Of the pairs' rows, the one with the median LogGPS error, with every pair's error beside it.
CrossRow median_pair(std::vector<CrossRow> pairs) {
  std::vector<double> errors;
  for (const auto& c : pairs) errors.push_back(c.loggps_error_pct);
  CrossRow kept = std::move(pairs[model::median_index(errors)]);
  kept.pairs = static_cast<int>(pairs.size());
  kept.loggps_error_pct_pairs = std::move(errors);
  return kept;
}

std::string number(double v, const char* format) { return std::isfinite(v) ? fmt::format(fmt::runtime(format), v) : "-"; }

}  // namespace

std::vector<CrossRow> cross_transport(const TransportRuns& a, const TransportRuns& b) {
  std::vector<CrossRow> out;
  if (a.calibrations.empty() || b.calibrations.empty()) return out;
  for (const auto& ra : a.rows) {
    if (!ra.ok()) continue;
    for (const auto& rb : b.rows) {
      if (!rb.ok() || rb.case_name != ra.case_name || rb.size_label != ra.size_label || rb.ranks != ra.ranks) continue;
      // Repetitions made one after the other, alternating (mstep validate does): each recording is
      // predicted against the run on the other transport made beside it, and the pair with the
      // median error is shown.
      const std::size_t n = ra.repetition_traces.size();
      const bool paired = n > 0 && rb.repetition_traces.size() == n && ra.repetitions_s.size() == n &&
                          rb.repetitions_s.size() == n;
      std::vector<CrossRow> ab, ba;
      for (std::size_t k = 0; k < (paired ? n : 1); ++k) {
        const std::string ta = paired ? ra.repetition_traces[k] : ra.trace, tb = paired ? rb.repetition_traces[k] : rb.trace;
        const double xa = paired ? ra.repetitions_s[k] : ra.actual_s, xb = paired ? rb.repetitions_s[k] : rb.actual_s;
        // Each run's computation comes with its own prediction: no trace is read twice for it.
        double ca = model::kNaN, cb = model::kNaN;
        CrossRow one = predict(ta, ra, a, xb, tb, b, ca), other = predict(tb, rb, b, xa, ta, a, cb);
        const double there_b = std::isfinite(cb) ? cb : computation_of(tb), there_a = std::isfinite(ca) ? ca : computation_of(ta);
        if (one.error.empty()) {
          one.computation_s = ca, one.computation_there_s = there_b;
          one.compute_diff_pct = computation_diff(ca, there_b);
        }
        if (other.error.empty()) {
          other.computation_s = cb, other.computation_there_s = there_a;
          other.compute_diff_pct = computation_diff(cb, there_a);
        }
        ab.push_back(std::move(one));
        ba.push_back(std::move(other));
      }
      out.push_back(median_pair(std::move(ab)));
      out.push_back(median_pair(std::move(ba)));
    }
  }
  return out;
}

std::string cross_text(std::span<const CrossRow> rows, bool markdown) {
  std::string s;
  if (markdown) {
    s += "| case | size | ranks | recorded on | predicted for | actual there s | LogGPS s | LogGPS err % | MPM s | MPM err % "
         "| computation recorded vs there % |\n"
         "|---|---|--:|---|---|--:|--:|--:|--:|--:|--:|\n";
    for (const auto& r : rows)
      s += fmt::format("| {} | {} | {} | {} | {} | {:.6f} | {} | {} | {} | {} | {} |\n", r.case_name, r.size_label, r.ranks,
                       r.from, r.to, r.actual_to_s, number(r.loggps_s, "{:.6f}"), number(r.loggps_error_pct, "{:+.1f}"),
                       number(r.mpm_s, "{:.6f}"), number(r.mpm_error_pct, "{:+.1f}"), number(r.compute_diff_pct, "{:+.1f}"));
    return s;
  }
  s += fmt::format("{:<14} {:<8} {:>5} {:<14} {:<14} {:>12} {:>12} {:>8} {:>12} {:>8} {:>10}\n", "case", "size", "ranks",
                   "recorded on", "predicted for", "actual s", "LogGPS s", "err %", "MPM s", "err %", "compute %");
  for (const auto& r : rows) {
    s += fmt::format("{:<14} {:<8} {:>5} {:<14} {:<14} {:>12.6f} {:>12} {:>8} {:>12} {:>8} {:>10}{}\n", r.case_name,
                     r.size_label, r.ranks, r.from, r.to, r.actual_to_s, number(r.loggps_s, "{:.6f}"),
                     number(r.loggps_error_pct, "{:+.1f}"), number(r.mpm_s, "{:.6f}"), number(r.mpm_error_pct, "{:+.1f}"),
                     number(r.compute_diff_pct, "{:+.1f}"), r.error.empty() ? "" : "  " + r.error);
  }
  return s;
}

nlohmann::json cross_json(std::span<const CrossRow> rows) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json pairs = nlohmann::json::array();
    for (double e : r.loggps_error_pct_pairs) pairs.push_back(num(e));
    j.push_back({{"case", r.case_name}, {"size", r.size_label}, {"ranks", r.ranks}, {"recorded_on", r.from},
                 {"predicted_for", r.to}, {"actual_s", r.actual_to_s}, {"loggps_s", num(r.loggps_s)},
                 {"loggps_error_pct", num(r.loggps_error_pct)}, {"mpm_s", num(r.mpm_s)},
                 {"mpm_error_pct", num(r.mpm_error_pct)}, {"computation_diff_pct", num(r.compute_diff_pct)},
                 {"computation_s", num(r.computation_s)}, {"computation_there_s", num(r.computation_there_s)},
                 {"pairs", r.pairs}, {"loggps_error_pct_pairs", pairs},
                 {"params", {{"recorded", r.from_params}, {"there", r.to_params}}}, {"error", r.error}});
  }
  return j;
}

std::string cross_goal(std::span<const CrossRow> rows) {
  double worst = 0;
  std::size_t counted = 0, over = 0, computation_differs = 0;
  for (const auto& r : rows) {
    if (!std::isfinite(r.loggps_error_pct)) continue;
    ++counted;
    worst = std::max(worst, std::abs(r.loggps_error_pct));
    const bool is_over = std::abs(r.loggps_error_pct) > model::kOverPct;
    over += is_over;
    computation_differs += is_over && std::isfinite(r.compute_diff_pct) && std::abs(r.compute_diff_pct) > model::kOverPct;
  }
  if (counted == 0) return "LogGPS what-if from one transport to the other within 10% on every case: untested";
  return fmt::format("LogGPS what-if from one transport to the other within 10% on every case: {} (largest {:.1f}%, "
                     "{} of {} over 10%{})",
                     over == 0 ? "met" : "not met", worst, over, counted,
                     computation_differs == 0 ? ""
                                              : fmt::format("; in {} of them the two recordings' computation differs by "
                                                            "more than 10% too",
                                                            computation_differs));
}

}  // namespace mstep::cli
