// Whether an OTF2 archive's ranks share one clock, and the offsets that put them on one when they
// do not. EZTrace 2 stamps each process on its own: in its archive of the shipped ring, every
// message from rank 0 arrives 46 us before it was sent, and rank 1 leaves the final MPI_Barrier
// 54 us before rank 0 enters it. Members of a collective of all ranks (MPI_Barrier, MPI_Allreduce,
// ...) cannot leave it before its last member entered: where the archive says otherwise, each
// rank's clock is moved so that all leave its first such collective together (and its last, where
// every rank has the same number of them: a drift between the two), as libmstep's own clock
// synchronisation at MPI_Init lines them up.
#pragma once

#include <string>
#include <vector>

#include "format/trace_format.hpp"

namespace mstep::model {

struct Otf2Clocks {
  bool aligned = false;
  std::string why;                             // one line: what disagreed, and what was done
  std::vector<std::vector<ClockSync>> samples; // per rank when aligned: AtInit (and AtFinalize) samples
};

// Reads the archive `anchor` once for the ranks' collectives of all ranks.
Otf2Clocks check_otf2_clocks(const std::string& anchor);

}  // namespace mstep::model
