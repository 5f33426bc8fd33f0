// Measurements with every rank: the communication patterns of Roda et al. for the BSPWB/MPM g
// and L (MODELS.md section 2), and the per-pair latency and injection time that the broadcast
// schedules of MODELS.md section 4 take.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/params/fit.hpp"
#include "tools/calibrate/mpi_util.hpp"

namespace mstep::calib {

struct PatternOptions {
  std::vector<double> h;  // h-relations in bytes (formula 4 turns them into message sizes)
  int rounds = 6;         // over all (pattern, h), alternating order
  int reps = 5;           // per (pattern, h) and round
  double budget = 10;     // seconds; later rounds are skipped past it (at least one is done)
  bool progress = true;
};

// Times per pattern and h: medians over the repetitions of the slowest rank's time, valid on
// rank 0 of `world`. Names: Exchange, PingPong, OneToAll, AllToOne, AllToAll, OneToAllBcast.
struct PatternResult {
  std::vector<model::PatternTimes> patterns;
  double seconds = 0;
};

PatternResult measure_patterns(MPI_Comm world, std::vector<char>& send_buf, std::vector<char>& recv_buf,
                               const PatternOptions& options);

struct BroadcastOptions {
  std::uint64_t bytes = 8;
  int reps = 30;
};

// Per ordered pair (u,v): injection[u*P+v] = time u spends in MPI_Send to v (receive posted),
// latency[u*P+v] = lambda from the timed exchange, (e - s - (D(u,v) + D(v,u))) / 2. Valid on
// rank 0 of `world`.
struct BroadcastResult {
  std::size_t nodes = 0;
  std::vector<double> latency;
  std::vector<double> injection;
  double seconds = 0;
};

BroadcastResult measure_broadcast_inputs(MPI_Comm world, std::vector<char>& send_buf,
                                         std::vector<char>& recv_buf, const BroadcastOptions& options);

}  // namespace mstep::calib
