// `mstep calibrate`'s last step: libmstep's substitute collectives (interpose/substitute.hpp), each
// MPICH's choice of algorithm over point-to-point messages, timed per call between two ranks as
// MPICH's own were, so that the replay charges a substitute's own cost beyond its messages
// (allocation, copies, local reductions, the private communicator) as it charges MPICH's
// (model::CollectiveTimes::substitute_s). mstep_calib --collectives-only runs under libmstep with
// the substitutes, twice; the recorder's cost per call in those times is measured beside them on a
// one-int MPI_Allreduce on MPI_COMM_SELF, recorded and native (--self-probe-only), and taken off.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "model/params/params.hpp"

namespace mstep::cli {

struct SubstituteCalibration {
  std::vector<std::string> launcher;  // the launcher line the calibration ran, up to the program
  std::string bench;                  // mstep_calib
  std::string library;                // libmstep.so
  std::filesystem::path work;         // a directory of its own for the runs, removed after
  bool quick = false;
  double timeout_s = 120;             // as the calibration's watchdog
};

// Sets substitute_s in p.collectives. Returns a note for the parameter file; throws
// std::runtime_error (one line) where a run failed, p unchanged.
std::string calibrate_substitutes(const SubstituteCalibration& c, model::CalibrationParams& p);

}  // namespace mstep::cli
