// Did the machine change speed while a validation ran? Two calibrations of one transport, before
// and after its runs, compared where the models are most sensitive: the half round trip of 8 bytes
// and the one at S, the first size that is a rendezvous. This machine's latency moves from one
// period to the next (shared memory 150-650 ns; TCP's rendezvous 40 or 47-67 us), and a table
// whose runs came out in another period than their parameters misses by that much.
#pragma once

#include <optional>
#include <string>

#include "model/params/params.hpp"

namespace mstep::model {

// One sentence saying what moved by more than `tolerance` (relative), or nullopt when nothing did
// or a calibration lacks the measurements.
std::optional<std::string> speed_change(const CalibrationParams& before, const CalibrationParams& after,
                                        double tolerance = 0.15);

}  // namespace mstep::model
