// What-if questions about the network (MODELS.md section 5: "the same question can be asked of a
// recorded trace by re-running the model with scaled parameters"): edits of a calibrated
// parameter file, and every model's prediction of one trace under the baseline and the edited
// parameters side by side.
//
// Editing is pure (no I/O): parse_edit reads "NAME=VALUE" with units, apply_edits and
// adopt_network return new parameters and the list of what changed. compare_whatif runs the
// models of `mstep report` on both parameter sets.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/params/params.hpp"
#include "model/params/quantity.hpp"
#include "model/trace/trace_dir.hpp"
#include "model/analysis/waits.hpp"

namespace mstep::model {

// A bad edit: one line, naming the edit and what is accepted instead.
class WhatIfError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class EditKind : std::uint8_t { Set, Scale };

// One parsed edit. `value` is in SI units for Set (seconds, seconds per byte, bytes per second,
// bytes with +infinity for inf) and a plain factor for Scale.
struct Edit {
  EditKind kind = EditKind::Set;
  std::string name;  // as accepted, e.g. "L", "G", "mpm.g", "linear.B", "cold"
  Quantity quantity = Quantity::Time;
  double value = 0;
  bool off = false;  // "cold=off": remove the cold-start and fresh-buffer terms
};

// The names parse_edit accepts, in the order the error messages list them.
std::span<const std::string_view> whatif_names();

// Parses "NAME=VALUE" (Set, VALUE as parse_quantity reads it) or "NAME=FACTOR" (Scale);
// WhatIfError on a bad name, unit or value.
Edit parse_edit(std::string_view text, EditKind kind);

// One parameter that changed: its values in SI units (bytes: +infinity for infinite).
struct Change {
  std::string name;  // "L", "Gs", "mpm.g", "linear.below.B", "cold.send", ...
  Quantity quantity = Quantity::Time;
  double from = 0;
  double to = 0;
};

// "L 163 ns -> 2 us".
std::string describe(const Change& c);

struct EditedParams {
  CalibrationParams params;
  std::vector<Change> changes;     // in the order applied
  std::vector<std::string> notes;  // what was kept, and why
};

// The edits applied in order to a copy of `base`. G stands for Gs and Gl, linear.T0 and linear.B
// for both regimes of the linear model (scaling B by 2 doubles the bandwidth), cold=off for
// every cold-start and fresh-buffer term. WhatIfError when an edit names a section `base` does
// not have (L without LogGPS parameters, mpm.g without "mpm", ...) or would make no sense
// (a negative time, a zero bandwidth).
EditedParams apply_edits(const CalibrationParams& base, std::span<const Edit> edits);

// The network of another parameter file: LogGPS's L, o, Os, Or, g, Gs, Gl, s, S (and P), the
// "mpm" and the "linear" sections are taken from `network` where it has them; the rest of `base`
// (metadata, cold start, broadcast inputs, raw points) is kept. `network_name` names the file in
// the notes.
EditedParams adopt_network(const CalibrationParams& base, const CalibrationParams& network,
                           std::string_view network_name);

// ---------------------------------------------------------------------------------------------
// Predictions under both parameter sets (model/analysis/whatif_compare.cpp).

// baseline / what-if; +infinity when the what-if time is 0 and the baseline's is not.
double speedup(double baseline_s, double whatif_s);

struct ModelComparison {
  std::string name;  // "MPM", "BSPWB", "LogGP", "LogGPS", "linear"
  bool available = false;
  double baseline_s = 0;
  double whatif_s = 0;
  double speedup = 0;
  std::string note;  // why it is not available
};

// LogGPS's prediction of one rank (its MPI_Finalize entry, as in model/replay/replay.hpp).
struct RankComparison {
  std::int32_t rank = 0;
  double actual_s = 0;
  double baseline_s = 0;
  double whatif_s = 0;
};

// A call site that waited: measured, and LogGPS-predicted at the measured start times under each
// parameter set. Which sends count as synchronous (late-receiver candidates) follows the
// baseline's S for both, so that the measured side stays the same and a what-if S = inf shows as
// a predicted wait of 0.
struct SiteComparison {
  WaitSite site;                // wait_s measured, predicted_wait_s under the baseline
  double whatif_predicted_s = 0;
};

struct WhatIfResult {
  std::string trace;
  int ranks = 0;
  bool complete = false;
  double actual_s = 0;
  std::vector<ModelComparison> models;  // MPM, BSPWB, LogGP, LogGPS, linear
  std::vector<RankComparison> per_rank; // empty unless both sets have LogGPS parameters
  std::vector<SiteComparison> sites;    // largest measured wait first
  std::vector<std::string> problems;    // the trace's (as mstep report has them)
  std::vector<std::string> notes;
};

// Every model of build_report (model/analysis/report.hpp) on `trace` under `baseline` and `whatif`.
// `streamed_jobs` > 0: `trace` was loaded with metadata_only and every pass streams its rank files
// (build_report_streamed with that many jobs).
WhatIfResult compare_whatif(const TraceDir& trace, const CalibrationParams& baseline, const CalibrationParams& whatif,
                            unsigned streamed_jobs = 0);

}  // namespace mstep::model
