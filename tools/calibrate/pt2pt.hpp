// Point-to-point measurements between two ranks, for LogGPS (MODELS.md section 3): Netgauge's
// PRTT(1,0,k), PRTT(n,0,k) and PRTT(n,d,k), the receive overhead of a message already there, and
// the direct test of S (a blocking send against a receiver that posts late), refined to the byte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/params/fit.hpp"
#include "model/params/params.hpp"
#include "tools/calibrate/mpi_util.hpp"

namespace mstep::calib {

struct Pt2ptOptions {
  std::vector<std::uint64_t> sizes;  // ascending
  int rounds_min = 2;                // rounds over all sizes (alternating direction)
  int rounds_max = 8;
  double budget = 20;               // seconds for the rounds; the rounds stop early past it
  double size_round_budget = 6e-3;  // seconds per size and round: sets the repetitions
  int reps_min = 3;
  int reps_max = 40;
  int late_reps = 9;        // early/late pairs per size in the test of S
  double warmup_max = 1.5;  // seconds
  bool progress = true;
};

// Valid on the first rank of the pair only.
struct Pt2ptResult {
  std::vector<model::PrttPoint> points;
  std::vector<model::RawPoint> raw;
  std::uint64_t S = model::kInfiniteBytes;  // from the late-receiver test
  // Whether a rendezvous transfer needs its sender inside MPI (LogGPSParams::rendezvous_push):
  // the receiver's Wait against a sender that computes `push_compute` seconds after its Isend.
  bool push = false;
  double push_compute = 0, push_wait = 0;
  std::uint64_t push_bytes = 0;
  int rounds = 0;
  double half_rtt_8B = 0;
  double seconds = 0;
  std::vector<std::string> warnings;
};

// Both ranks of `pair` (a two-rank communicator) call this with the same options; buffers must
// hold the largest size.
Pt2ptResult measure_pt2pt(const Comm& pair, std::vector<char>& send_buf, std::vector<char>& recv_buf,
                          const Pt2ptOptions& options);

// The pair's 8-byte half round trip now: the median of 33 round trips (PRTT(1, 0, 8)), a
// millisecond or so. Taken at the start and after each phase of the calibration, so that a
// calibration whose phases fell in different periods of the machine says so (model::mixed_periods).
// Both ranks call it and get rank 0's.
double probe_half_rtt_8B(const Comm& pair, std::vector<char>& send_buf, std::vector<char>& recv_buf);

}  // namespace mstep::calib
