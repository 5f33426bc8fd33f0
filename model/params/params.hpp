// The parameter file of `mstep calibrate` (and of the presets in share/params/): JSON with the
// LogGPS parameters at the top level (L, o, Os, Or, g, Gs, Gl in seconds and seconds per byte;
// s and S in bytes, null meaning infinite), the cold start in "cold", the BSPWB/MPM g and L in "mpm", the two-regime linear
// model in "linear", the broadcast inputs in "broadcast", and "meta", "fits", "raw", "warnings".
// Every section is optional, but a file must hold the LogGPS keys or "mpm" or "linear"; if one
// LogGPS key is there, all must be. Errors are one line naming the file and the key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/cost/bspwb.hpp"
#include "model/params/cold_start.hpp"
#include "model/cost/collectives.hpp"
#include "model/cost/linear.hpp"
#include "model/cost/loggps.hpp"
#include "model/params/collective_times.hpp"

namespace mstep::model {

// "FILE: key 'mpm.g': expected a number, got a string" and the like.
class ParamsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kParamsFormatVersion = 1;

// g and L of one communication pattern (MODELS.md section 2), with the times they came from.
struct MpmPattern {
  std::string name;
  double g = 0;         // seconds per byte of h
  double L = 0;         // seconds (may be negative: the paper's tables have such values)
  double residual = 0;  // relative RMS of the fit
  std::vector<double> seconds;  // one per h of MpmParams::h; empty when not measured
};

struct MpmParams {
  double g = 0;
  double L = 0;
  double residual = 0;
  HCombine combine = HCombine::Sum;  // how the h-relations were counted
  std::vector<double> h;             // the h-relations timed, bytes
  std::vector<MpmPattern> patterns;

  BspParams bsp() const {
    BspParams p;
    p.g = g, p.L = L, p.combine = combine;
    return p;
  }
};

struct LinearParams {
  TwoRegimeLinearModel model;  // an infinite B (null in the file): time independent of size
  double residual_below = 0;   // relative RMS of each fit
  double residual_above = 0;
};

struct BroadcastParams {
  std::uint64_t bytes = 0;   // message size the pairs were timed with
  BroadcastNetwork network;  // latency lambda and injection time per ordered pair
};

// One line of a piecewise fit of a measured curve (x = bytes, y = seconds).
struct CurveSegment {
  std::string curve;  // half_rtt, gap, ...
  std::uint64_t from = 0;
  std::uint64_t to = 0;  // inclusive: the largest size in the segment
  double intercept = 0;
  double slope = 0;
  double residual = 0;
  std::uint64_t points = 0;
  std::uint64_t outliers = 0;
};

// Medians per message size, as measured.
struct RawPoint {
  std::uint64_t bytes = 0;
  double half_rtt = 0;
  double gap = 0;
  double send_overhead = 0;
  double recv_overhead = 0;
  double late_send_wait = 0;  // extra time in MPI_Send when the receive is posted late
  bool synchronous = false;
};

struct ParamsMeta {
  std::string source;    // "mstep calibrate", or the paper of a preset
  std::string platform;  // presets: the machine
  std::string host;
  std::vector<std::string> hosts;
  std::string mpi_library;
  std::string mpi_version;
  std::string date;
  std::uint32_t processes = 0;
  std::vector<int> pair;  // the two ranks the point-to-point parameters were measured between
  std::string mode;       // full or quick
  double duration_s = 0;
  double half_rtt_8B = 0;  // half the measured 8-byte round trip, for comparison with L
  // The same quickly probed (a median of 33) at the start and after each phase of the calibration,
  // in order: {"start", s}, {"after point-to-point", s}, {"after collectives", s}.
  std::vector<std::pair<std::string, double>> probes_8B;
  std::uint64_t S_fit = kInfiniteBytes;  // S as the half-round-trip curve suggests it
  std::map<std::string, double> residuals;           // relative RMS per fit
  std::map<std::string, std::string> environment;    // UCX_*, MPIR_CVAR_*, ... at the time
  std::vector<std::string> notes;                    // presets: what is uncertain
};

struct CalibrationParams {
  std::optional<LogGPSParams> loggps;
  std::optional<ColdStart> cold;  // "cold": the first messages of a pair (model/params/cold_start.hpp)
  std::optional<MpmParams> mpm;
  std::optional<LinearParams> linear;
  std::optional<BroadcastParams> broadcast;
  CollectiveTable collectives;  // "collectives": measured at 2 ranks (model/params/collective_times.hpp)
  ParamsMeta meta;
  std::vector<CurveSegment> segments;
  std::vector<RawPoint> raw;
  std::vector<std::string> warnings;
};

// Read and check a parameter file; ParamsError on any problem.
CalibrationParams read_params(const std::filesystem::path& file);
// The same from text; `name` stands for the file in messages.
CalibrationParams parse_params(std::string_view text, const std::string& name);

// Pretty JSON with a trailing newline.
std::string params_to_json(const CalibrationParams& params);
// Written to FILE.tmp, then renamed over FILE; ParamsError if that fails.
void write_params(const std::filesystem::path& file, const CalibrationParams& params);

}  // namespace mstep::model
