// Synthetic traces for tests and benchmarks: valid RankTrace objects (MPI_COMM_WORLD definition,
// clock samples at Init and Finalize so that Timeline works, MPI_Init first and MPI_Finalize
// last) whose times come from a simple simulated execution, so that they look like a recorded
// run: computation between calls, receives that wait for late senders, collectives that wait for
// the last member.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/rank_trace.hpp"

namespace mstep::model {

enum class Pattern : std::uint8_t {
  // Every iteration: Irecv from the left neighbour, Isend to the right one, Waitall (4 records).
  Ring,
  // Pairs (0,1), (2,3), ...: the even rank sends and receives the answer, the odd one receives,
  // computes and answers (2 records). With an odd number of ranks the last one only computes.
  PingPong,
  // Every iteration a random shift s: Sendrecv to rank + s, from rank - s (2 records); every 16th
  // iteration also an 8-byte MPI_Allreduce.
  Random,
  // Every iteration an MPI_Alltoall of 8 or 1024 bytes per block (1 record), after computation.
  Alltoall,
};

// About `events` records in all (whole iterations: never more), over `ranks` ranks, with message
// sizes drawn from {8, 1024, 65536} bytes and computation from 1 to 5 microseconds per call.
// Clock ticks are nanoseconds. Deterministic for a given seed.
std::vector<RankTrace> synthetic_trace(int ranks, Pattern pattern, std::size_t events, unsigned seed);

}  // namespace mstep::model
