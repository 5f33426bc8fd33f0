// What the LogGPS replay charges per call for `calls` back-to-back (or isolated) calls of one blocking collective
// between two ranks that enter together, each with blocks of m bytes: the model's side of the
// collectives `mstep calibrate` measures (model/params/collective_times.hpp). Op::Sendrecv is an
// exchange with the other rank; Op::Waitall the same exchange as MPI_Irecv, MPI_Isend and
// MPI_Waitall, charged for the three calls.
#pragma once

#include <cstdint>

#include "format/trace_format.hpp"
#include "model/cost/loggps.hpp"
#include "model/params/cold_start.hpp"

namespace mstep::model {

// Seconds per call inside the calls, both ranks' mean; no calibrated residual is added. `gap_s`:
// computation of each rank before every call (mstep calibrate's isolated loop; 0: back to back).
double collective_charge(const LogGPSParams& p, const ColdStart& cold, Op op, std::uint64_t m, std::uint32_t calls = 16,
                         double gap_s = 0);

}  // namespace mstep::model
