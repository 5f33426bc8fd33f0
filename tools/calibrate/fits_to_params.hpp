// From the measurements of mstep_calib to the parameter file: the fits of MODELS.md (LogGPS from the
// PRTT points, section 3; the two-regime linear model, section 5; BSPWB/MPM's g and L over the five
// patterns, section 2; the broadcast inputs, section 4) and the cold start. Rank 0 only; no MPI.
#pragma once

#include <cstdint>

#include "model/params/params.hpp"
#include "tools/calibrate/cold_start.hpp"
#include "tools/calibrate/patterns.hpp"
#include "tools/calibrate/pt2pt.hpp"

namespace mstep::calib {

// The size the cold start is measured with: eager on the machines seen so far (s ~ 128 B,
// S ~ 8 KiB); where it is not, the cold start is reported as not measured.
inline constexpr std::uint64_t kColdStartBytes = 4096;
// And a small size measured just before it on the same fresh pair: whether the smallest messages
// pay too (over shared memory they travel inside UCX's FIFO element and do not; every one of 4096 B
// does). Where they do not, sizes up to it are spared even when the fit found no short protocol (s
// is a break in the gap curve that the fit finds in some calibrations and not in others).
inline constexpr std::uint64_t kColdSmallBytes = 8;

// The fits of everything measured.
model::CalibrationParams build_params(const Pt2ptResult& pt, const PatternResult& pat, const PatternOptions& pat_opt,
                                      const BroadcastResult& bc, std::uint64_t bcast_bytes, int processes);

// The cold start of `samples` (kColdStartBytes) and `small` (kColdSmallBytes), and the sizes that pay
// it; says in p's notes what was and was not measured.
model::ColdStart cold_start_of(const ColdStartSamples& samples, const ColdStartSamples& small,
                               model::CalibrationParams& p);

}  // namespace mstep::calib
