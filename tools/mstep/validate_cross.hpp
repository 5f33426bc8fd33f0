// mstep validate's cross-transport table: each case recorded on one transport, predicted for the
// other as `mstep whatif TRACE --network OTHER` predicts it (the other transport's calibrated
// parameters adopted onto the recording's), against the real runs there (issue 13).
#pragma once

#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/analysis/validation.hpp"
#include "model/params/params.hpp"

namespace mstep::cli {

struct CrossRow {
  std::string case_name, size_label;
  int ranks = 0;
  std::string from, to;        // transports: recorded on `from`, predicted for `to`
  double actual_to_s = 0;      // the real run on `to`
  double loggps_s = 0, mpm_s = 0;  // NaN where the model is not available
  double loggps_error_pct = 0, mpm_error_pct = 0;
  // The computation (all ranks' time outside MPI) of the recorded run against the real run's
  // there, 100 * (recorded - there) / there: a what-if keeps the recorded computation, so a
  // difference here is missed one for one, whatever the network model.
  double compute_diff_pct = 0;
  double computation_s = 0, computation_there_s = 0;  // the two computations compared (NaN: unknown)
  // The recordings paired with a real run made just before or after it (validate alternates the
  // transports): how many pairs, and each one's LogGPS error; the row's numbers are the pair with
  // the median error. 1 where the rows' repetitions could not be paired (their kept runs are).
  int pairs = 0;
  std::vector<double> loggps_error_pct_pairs;
  // The files of the calibrations of the two runs' periods (TransportRuns).
  std::string from_params, to_params;
  std::string error;           // non-empty: the prediction failed
};

struct TransportRuns {
  std::string name;  // "shared memory", "TCP"
  std::span<const model::ValidationRow> rows;
  // The transport's calibrations, the first before the runs, then those made during and after them
  // (Experiment::calibrations), and their files; none: the cross table is not made. Each run is
  // taken in its own period, the recording's parameters by its probe and the target's by the
  // probe of the run there.
  std::vector<const model::CalibrationParams*> calibrations;
  std::vector<std::string> files;
};

// Both directions for every case both transports ran without error; repetition k of one is paired
// with repetition k of the other when both rows have the same number.
std::vector<CrossRow> cross_transport(const TransportRuns& a, const TransportRuns& b);

std::string cross_text(std::span<const CrossRow> rows, bool markdown);
nlohmann::json cross_json(std::span<const CrossRow> rows);
// "what-if from one transport to the other within 10% on every case: met (largest 4.2%)"
std::string cross_goal(std::span<const CrossRow> rows);

}  // namespace mstep::cli
