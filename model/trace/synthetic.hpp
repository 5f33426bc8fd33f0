// Synthetic traces for tests and benchmarks: valid RankTrace objects (MPI_COMM_WORLD definition,
// clock samples at Init and Finalize so that Timeline works, MPI_Init first and MPI_Finalize
// last) whose times come from a simple simulated execution, so that they look like a recorded
// run: computation between calls, receives that wait for late senders, collectives that wait for
// the last member.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
  // Ranks on a periodic 2-D (3-D) grid as MPI_Dims_create would shape it; every iteration an Irecv
  // from and an Isend to each neighbour along every dimension longer than 1, then one Waitall
  // (4 or 6 neighbours: 16 or 24 records).
  Halo2D,
  Halo3D,
  // Every iteration an MPI_Bcast from rank 0 of 8 bytes to 64 KiB (1 record).
  Bcast,
  // Every iteration an 8-byte MPI_Allreduce (1 record).
  Allreduce,
};

// "ring", "pingpong", "random", "alltoall", "halo2d", "halo3d", "bcast", "allreduce".
const char* pattern_name(Pattern p);
std::optional<Pattern> pattern_from_name(std::string_view name);
// The names, comma separated, for help texts and errors.
std::string pattern_names();

// About `events` records in all (whole iterations: never more), over `ranks` ranks, with message
// sizes drawn from {8, 1024, 65536} bytes and computation from 1 to 5 microseconds per call.
// Clock ticks are nanoseconds. Deterministic for a given seed.
std::vector<RankTrace> synthetic_trace(int ranks, Pattern pattern, std::size_t events, unsigned seed);

}  // namespace mstep::model
