// The numbers of `mstep validate`, as pure functions of its runs (no MPI, no processes): each run's
// actual time against the prediction of every model, the summary over the runs (median and
// largest |error|, runs over 10%), which runs send messages of S bytes or more and whether LogGPS
// beats LogGP on them, whether the goals of the validation are met, and the tables that show it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/cost/loggps.hpp"
#include "model/trace/trace_dir.hpp"

namespace mstep::model {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The models of a validation table, in column order (the names of Report::models).
inline constexpr std::array<std::string_view, 5> kValidatedModels{"MPM", "BSPWB", "LogGP", "LogGPS", "linear"};

// A run's point-to-point messages on either side of the rendezvous threshold S, counted at the
// sender (MPI_Send/Isend family and Sendrecv's send half; sends to MPI_PROC_NULL excluded). The
// messages inside collectives are not in the trace and are not counted.
struct SizesAroundS {
  std::uint64_t S = kInfiniteBytes;
  std::uint64_t below = 0;        // messages of fewer than S bytes
  std::uint64_t at_or_above = 0;  // messages of S bytes or more: rendezvous under LogGPS
  std::uint64_t smallest = 0;     // bytes; 0 when there are no messages
  std::uint64_t largest = 0;
  std::uint64_t messages() const { return below + at_or_above; }
  // A run "crosses S" when any of its messages is S bytes or more: exactly the runs on which
  // LogGPS (synchronous sends from S on) and LogGP (never synchronous) can differ.
  bool crosses() const { return at_or_above > 0; }
};
SizesAroundS sizes_around(const TraceDir& trace, std::uint64_t S);

struct Prediction {
  std::string model;
  bool available = false;
  double predicted_s = kNaN;
  double error_pct = kNaN;  // 100 * (actual - predicted) / actual, signed
  std::string note;         // why it is unavailable
};

// One line of a validation table: one case at one size and rank count, under one experiment.
struct ValidationRow {
  std::string experiment;  // empty: the main table; else the label of the S-moved experiment
  std::string case_name;
  std::string size_label;
  std::vector<std::string> args;
  int ranks = 0;
  bool oversubscribed = false;  // more ranks than cores
  int cores = 0;
  std::vector<double> repetitions_s;  // actual time of every repetition
  std::vector<std::string> repetition_traces;  // and its trace directory, in the same order
  std::size_t chosen = 0;             // the repetition kept: the one with the median actual time
  double actual_s = kNaN;
  std::vector<Prediction> predictions;  // kValidatedModels order
  SizesAroundS sizes;
  std::string trace;  // directory of the kept repetition
  // The kept repetition's own 8-byte half round trip (model/analysis/speed_check.hpp) and whether
  // it differs from the calibration's by more than its tolerance: a run in another period.
  double probe_init_s = 0, probe_finalize_s = 0;
  bool other_period = false;
  // Predicted with the calibration made after the runs, not the one before them: the run's probe
  // was nearer its period (model/analysis/speed_check.hpp, nearest_period).
  bool params_after = false;
  // Predicted with a calibration made during the runs: one of the runs before came out of every
  // calibration's period, and validate calibrated again at once; this run is of that period.
  bool params_during = false;
  std::string params_file;  // the calibration predicted with, where not the experiment's first
  std::string error;  // non-empty: the run failed and has no numbers
  bool ok() const { return error.empty(); }
  const Prediction* find(std::string_view model) const;
};

// Index of the median of `values` (the lower one of the middle two for an even count); 0 when
// empty. NaNs sort last. (The median itself is model::median of model/params/fit.hpp.)
std::size_t median_index(std::span<const double> values);

inline constexpr double kOverPct = 10;  // a prediction "over 10%" is off by more than this

struct ModelSummary {
  std::string model;
  std::size_t rows = 0;  // rows with a prediction
  double median_abs_error_pct = kNaN;
  double max_abs_error_pct = kNaN;
  std::size_t over_10pct = 0;
};
// Over the rows that ran at `ranks` ranks and have a prediction of `model`.
ModelSummary summarize_model(std::span<const ValidationRow> rows, std::string_view model, int ranks);
std::vector<ModelSummary> summarize_models(std::span<const ValidationRow> rows, int ranks);
// The rank counts besides `except` whose runs all had a core each (none oversubscribed) and of which
// one at least ran: the counts worth a summary of their own. Increasing.
std::vector<int> timed_rank_counts(std::span<const ValidationRow> rows, int except);

struct CrossingRow {
  std::string experiment, case_name, size_label;
  int ranks = 0;
  double loggps_abs_error_pct = kNaN;
  double loggp_abs_error_pct = kNaN;
  bool loggps_better = false;  // strictly smaller |error|, by more than kTiePct
  bool tie = false;            // |errors| within kTiePct of each other: neither model is better
};
// The rows at `ranks` ranks that cross S and have both LogGPS and LogGP predictions.
std::vector<CrossingRow> crossing_rows(std::span<const ValidationRow> rows, int ranks);

enum class Verdict { Met, NotMet, Untested };
std::string_view verdict_name(Verdict v);  // "met", "not met", "untested"

inline constexpr double kGoalMedianPct = 3;  // median |LogGPS error| at most this
inline constexpr double kGoalMaxPct = 10;    // no |LogGPS error| above this
// Two |errors| this close (percentage points) are a tie: e.g. one rendezvous message to a waiting
// receiver, where LogGPS adds a microsecond of handshake to a 30 ms run.
inline constexpr double kTiePct = 0.1;

struct Goal {
  std::string goal;
  Verdict verdict = Verdict::Untested;
  std::string detail;
};
// The goals, over the rows at `ranks` ranks: median |LogGPS error| <= 3%, none above 10%, and
// LogGPS better than LogGP on every row that crosses S (a tie, within kTiePct, is named but does
// not fail the goal; a row where LogGP is better does). A failed row counts against the first two.
std::vector<Goal> check_goals(std::span<const ValidationRow> rows, int ranks);

// "+1.23" / "-0.50" with `decimals` digits; "-" for NaN.
std::string format_signed_pct(double pct, int decimals = 1);
// Seconds with 6 decimals; "-" for NaN.
std::string format_seconds(double s);

// A plain-text table of the rows, one line each, with a header.
std::string text_table(std::span<const ValidationRow> rows);
// The same as a markdown table (with the arguments of each run).
std::string markdown_table(std::span<const ValidationRow> rows);
// The per-model summary of the rows at `ranks` ranks, as text or markdown lines.
std::string summary_text(std::span<const ValidationRow> rows, int ranks, bool markdown);
// The rows crossing S (LogGPS against LogGP) and the goals, as text or markdown lines.
std::string goals_text(std::span<const ValidationRow> rows, int ranks, bool markdown);

}  // namespace mstep::model
