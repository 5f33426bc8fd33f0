// mstep validate's experiments and their recordings: one experiment is a table (the main one, S
// moved, TCP) with its environment and parameters; one case of it is recorded `repeat` times and
// the repetition with the median actual time is its row. A case's repetitions can be interleaved
// with those of the same case on another transport (CaseRuns, one repetition at a time), so that
// the cross table compares runs made seconds apart, not minutes: this machine's speed moves
// between periods (README, "Both transports").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/analysis/speed_check.hpp"
#include "model/analysis/validation.hpp"
#include "model/params/params.hpp"
#include "tools/mstep/validate_suite.hpp"

namespace mstep::cli {

struct ValidateOptions {
  std::string suite, dir = "mstep-validate", params, s_moved_params, tcp_params;
  std::string transport = "both";  // shm, tcp or both
  bool force = false, no_s_moved = false;
  int repeat = 3;
  double timeout_s = 300;  // a recording still running after this is ended and run again once
  RunFilter filter;        // --only, --ranks, --quick
};

// One table: its environment, its parameters, its runs and their rows.
struct Experiment {
  std::string label;  // empty: the main table
  std::map<std::string, std::string> env;
  std::string params_file;
  model::CalibrationParams params;
  std::vector<Planned> runs;
  std::vector<model::ValidationRow> rows;
  std::string speed_change;  // a calibration after the runs found the machine's speed moved
  // That calibration (quick), where it was made; rows nearer its period are predicted with it
  // (repredict_in_period).
  std::optional<model::CalibrationParams> after;
  std::string after_file;
  // Validate calibrated this experiment (no parameter file given): it may calibrate again during
  // the runs, quick, each time a run comes out of every calibration's period (this machine's
  // latency moves by 3 times between periods a minute or so long: README, "Parameters of the run's
  // period"); at most kMaxPeriodCalibrations of them.
  bool calibrates = false;
  struct Calibration {
    model::CalibrationParams params;
    std::string file;
  };
  std::vector<Calibration> during;
  int during_missed = 0;  // of those, the ones that did not find the period of the run before them

  // Every calibration in the order choose_by_period prefers them: the first, those made during the
  // runs, the one after; and each one's file.
  std::vector<const model::CalibrationParams*> calibrations() const;
  std::string file_of(std::size_t calibration) const;
};
inline constexpr std::size_t kMaxPeriodCalibrations = 8;
inline constexpr int kMaxPeriodMisses = 2;  // then no more: the runs' state is not one a calibration meets

// The 8-byte half round trip of the run of `trace` when it came out of the period of every
// calibration of the experiment (model::choose_by_period); nullopt when one holds it, or the run
// has no probe.
std::optional<double> out_of_every_period(const Experiment& x, const std::string& trace);

// The rows whose runs' own 8-byte half round trip is outside the first calibration's period,
// predicted again with the experiment's calibration of their period, or the nearest
// (ValidationRow::params_after, params_during); nothing with one calibration.
void repredict_in_period(Experiment& x);

// The recordings of one case of one experiment, made one repetition at a time.
class CaseRuns {
 public:
  // `calibration_error` non-empty: the experiment has no parameters, and the row says so unrun.
  CaseRuns(const ValidateOptions& o, const Experiment& x, const Planned& p, int cores,
           const std::string& calibration_error);
  // Every repetition recorded, or one failed (the row then says why).
  bool done() const;
  // Records the next repetition (exits 130 on Ctrl-C).
  void record_next();
  // The trace the last record_next recorded; empty when it recorded none (it failed, or every
  // repetition was done already: a case alternating with another transport is asked on).
  std::string last_trace() const { return just_recorded_ ? reps_.back().trace : std::string(); }
  // More ranks than cores: the runs busy-poll each other off the CPU and do not time.
  bool oversubscribed() const { return row_.oversubscribed; }
  // The row: the repetition with the median actual time, every repetition's time and trace.
  model::ValidationRow finish();

 private:
  struct Repetition {
    double actual_s = 0;
    std::vector<model::Prediction> predictions;
    model::SizesAroundS sizes;
    std::string trace;
    model::ProbedLatency probe;
    bool other_period = false;
  };
  void fail_row(std::string why);

  const ValidateOptions& o_;
  const Experiment& x_;
  const Planned& p_;
  model::ValidationRow row_;
  std::string what_;  // "ring 1k at 2 ranks [tcp]", for messages
  std::string program_;  // the case's program, as found (validate_suite.hpp, program_path)
  std::vector<Repetition> reps_;
  bool just_recorded_ = false;  // the last record_next added reps_.back()
};

}  // namespace mstep::cli
