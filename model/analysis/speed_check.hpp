// Did the machine change speed while a validation ran? Two calibrations of one transport, before
// and after its runs, compared where the models are most sensitive: the half round trip of 8 bytes
// and the one at S, the first size that is a rendezvous. This machine's latency moves from one
// period to the next (shared memory 150-650 ns; TCP's rendezvous 40 or 47-67 us), and a table
// whose runs came out in another period than their parameters misses by that much.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "model/params/params.hpp"
#include "model/trace/trace_dir.hpp"

namespace mstep::model {

// One sentence saying what moved by more than `tolerance` (relative), or nullopt when nothing did
// or a calibration lacks the measurements.
std::optional<std::string> speed_change(const CalibrationParams& before, const CalibrationParams& after,
                                        double tolerance = 0.15);

// The run's own small-message latency. libmstep synchronises clocks at MPI_Init and MPI_Finalize by
// a ping-pong of 8 bytes between rank 0 and each other rank, and keeps the best of its 8 round
// trips (ClockSync::rtt_ns): half of it is the run's 8-byte half round trip, the quantity the
// calibration's half_rtt_8B measures. It includes two clock reads the calibration's timing does not
// (tens of ns).
struct ProbedLatency {
  double at_init_s = 0;      // median over the ranks compared; 0 when none was measured
  double at_finalize_s = 0;  // 0 when no such rank reached MPI_Finalize
  std::size_t ranks = 0;     // ranks whose samples were used
  bool same_host = true;     // those ranks share rank 0's host (else: on other hosts)
};

// From the clock samples of every rank read (metadata is enough). `same_host`: compare the ranks on
// rank 0's host (the calibration's pair shared a host) or those on others. Hosts unknown: all ranks.
ProbedLatency probed_latency(const TraceDir& trace, bool same_host = true);

// One sentence when the run's probed half round trip, at MPI_Init or at MPI_Finalize, is more than
// `tolerance` (relative) above the calibration's, or below kProbeFasterBelow of it (the probe is a
// best of 8, the calibration a median, so a run in the calibration's state probes lower); nullopt
// when neither is, or either side lacks the measurement. This machine's latency moves by 3-4 times
// between periods, and a run in another period than its parameters is mispredicted by that much.
inline constexpr double kProbeFasterBelow = 0.5;
inline constexpr double kProbeSlowerAbove = 0.3;  // the default tolerance: 30% above
std::optional<std::string> run_speed_difference(const ProbedLatency& run, const CalibrationParams& params,
                                                double tolerance = kProbeSlowerAbove);

// One sentence when the calibration's own 8-byte probes (ParamsMeta::probes_8B) differ by more than
// `ratio` between its largest and smallest: its phases ran in different periods of the machine,
// so its point-to-point parameters and its collectives describe different states; nullopt when
// they agree or there are fewer than two.
inline constexpr double kMixedPeriodsAbove = 1.6;  // periods here differ by 3-4 times; a median of 33, by 20% at most
std::optional<std::string> mixed_periods(const ParamsMeta& meta, double ratio = kMixedPeriodsAbove);
// The same test without the sentence.
bool spans_periods(const ParamsMeta& meta, double ratio = kMixedPeriodsAbove);

// Did the calibration's pair share a host? (Unknown: yes.)
bool calibrated_on_one_host(const CalibrationParams& params);

// Of several calibrations, the one of the run's period. This machine's small-message latency moves
// by 3-4 times between periods, and a run predicted with a calibration of the other period misses
// by about as much (README, "Parameters of the run's period").
//
// nearest_period: the nearest by ratio of the run's half round trip to each calibration's 8-byte
// half round trip scaled by kProbeOverCalibration (smallest |ln|, the first of equals); a
// calibration without the measurement is never chosen over one with it. `by_probe` false, index 0:
// the run has no probe or no calibration has the measurement.
inline constexpr double kProbeOverCalibration = 0.85;  // the probe's bias: a best of 8 against a median
struct PeriodMatch {
  std::size_t index = 0;
  bool by_probe = false;
  bool in_period = false;  // run_speed_difference finds nothing to say against it
  double run_s = 0;        // the run's half round trip compared (0: no probe)
};
// The run's probes at MPI_Init and at MPI_Finalize: their geometric mean, either alone where the
// other is missing; 0 when none.
double run_half_rtt(const ProbedLatency& run);
PeriodMatch nearest_period(double run_s, std::span<const double> calibrated_s);
// Over parameter files and a trace: the first file in the run's period (the run's half round trip,
// run_half_rtt, not above 1 + kProbeSlowerAbove of its half_rtt_8B nor below kProbeFasterBelow of
// it: run_speed_difference's bounds, on the mean of the two probes, so that a run that changed
// period between them is placed by both; two calibrations of one period differ by their noise, and
// the order given is the user's preference; one whose own probes say its phases ran in different
// periods, mixed_periods, only when no other is in the run's period), else the nearest
// (nearest_period). Each file is compared with the ranks on
// its own kind of host, as run_speed_difference compares them.
PeriodMatch choose_by_period(const TraceDir& trace, std::span<const CalibrationParams* const> candidates);

}  // namespace mstep::model
