// The cold start of a fresh pair (model/params/cold_start.hpp): before any other traffic between the
// two ranks, the first rank sends `count` messages of `bytes` bytes, each answered by an empty
// one, and times each round trip and each MPI_Send. It must run first: everything after it
// finds the channel warm.
#pragma once

#include <cstdint>
#include <vector>

#include "tools/calibrate/mpi_util.hpp"

namespace mstep::calib {

// Valid on the first rank of the pair only.
struct ColdStartSamples {
  std::uint64_t bytes = 0;
  std::vector<double> rtt;   // per message, seconds
  std::vector<double> send;  // time inside its MPI_Send, seconds
};

ColdStartSamples measure_cold_start(const Comm& pair, char* send_buf, char* recv_buf, std::uint64_t bytes, int count);

// Fresh buffers (model::ColdStart::fresh_per_byte): per size, `reps` transfers from newly
// allocated and written buffers into newly allocated untouched ones, then `reps` with one buffer pair reused; each answered
// by an empty message. Returns the median over sizes of (median fresh - median warm) / size,
// on the first rank of the pair (0 elsewhere).
double measure_fresh_per_byte(const Comm& pair, const std::vector<std::uint64_t>& sizes, int reps);

}  // namespace mstep::calib
