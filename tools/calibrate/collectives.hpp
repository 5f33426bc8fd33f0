// The blocking collectives between the two ranks of the pair, back to back and isolated (each call
// after some computation), at a few message sizes: the measured side of
// CalibrationParams::collectives (model/params/collective_times.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "model/cost/loggps.hpp"
#include "model/params/collective_times.hpp"
#include "tools/calibrate/mpi_util.hpp"

namespace mstep::calib {

// The sizes the loops are timed at, ascending: 8 B, 1 KiB, 64 KiB, 1 MiB, and S/2, S and 4 S where S
// is finite, above 2 KiB, and they are not above 1 MiB (S = 8256 B: 8, 1024, 4128, 8256, 33024,
// 65536, 1048576; under UCX_RNDV_THRESH=1m, S of about 400 KB, 4 S is left out; S infinite: the
// first four alone). A call's excess over the replay's charge jumps at S, where its messages turn
// rendezvous (tests/bench/exchange.c, and every collective: 4 and 16 KiB interpolated from 1 and
// 64 KiB missed by a median 24% on shared memory, 2026-11-28), and the replay interpolates between
// these sizes: none of its spans crosses S.
inline constexpr std::uint64_t kLargestSize = 1048576;
std::vector<std::uint64_t> sizes_around(std::uint64_t S);

struct CollectiveOptions {
  // m: a member's block, ascending, for the collectives and the exchanges alike (mstep_calib sets
  // the ladder of its S; without one, the sizes of an S never reached).
  std::vector<std::uint64_t> sizes = sizes_around(model::kInfiniteBytes);
  bool exchanges = true;   // MPI_Sendrecv's and MPI_Waitall's exchanges too (false: the collectives alone)
  int rounds = 3;          // the median of this many loops per operation and size
  double loop_budget = 2e-3;  // seconds a loop aims at (from a first timing); 4 to 400 calls
  // The isolated loops (CollectiveTimes::isolated_*): each call after this much computation on both
  // ranks (0: not measured), timed inside the calls; `isolated_budget` seconds a loop, 4 to 100 calls.
  double isolated_gap = 100e-6;
  double isolated_budget = 5e-3;
};

// Both ranks of `pair` call this; the table (measured_s and isolated_measured_s only: the model's
// side is filled by the caller) is valid on its first rank. Buffers must hold 2 blocks of the largest size.
model::CollectiveTable measure_collectives(const Comm& pair, std::vector<char>& send_buf, std::vector<char>& recv_buf,
                                           const CollectiveOptions& options);

}  // namespace mstep::calib
