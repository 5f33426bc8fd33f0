// Whether an OTF2 archive's ranks share one clock, and the offsets that put them on one when they
// do not. EZTrace 2 stamps each process on its own: in its archive of the shipped ring, every
// message from rank 0 arrives 46 us before it was sent, and rank 1 leaves the final MPI_Barrier
// 51 us before rank 0 enters it. Members of a collective of all ranks (MPI_Barrier, MPI_Allreduce,
// ...) cannot leave it before its last member entered: each such instance bounds the offset
// between a rank's clock and rank 0's from both sides. Where the archive's own clocks break a
// bound, each rank's clock is moved to the middle of the interval all its instances leave (one
// offset a rank, no drift). Bounds only get looser when a rank is descheduled, never wrong, so the
// middle stays where no collective is left before it was entered.
#pragma once

#include <string>
#include <vector>

#include "format/trace_format.hpp"

namespace mstep::model {

struct Otf2Clocks {
  bool aligned = false;
  std::string why;                             // one line: what disagreed, and what was done
  std::vector<std::vector<ClockSync>> samples; // per rank when aligned: one sample with its offset
};

// Reads the archive `anchor` once for the ranks' collectives of all ranks.
Otf2Clocks check_otf2_clocks(const std::string& anchor);

}  // namespace mstep::model
