// A trace as a LogGOPSim GOAL schedule (Hoefler et al., "Group Operation Assembly Language"): per
// rank, its sends, receives and computation as operations with dependencies in program order, so
// that LogGOPSim can simulate the recorded run. Written to match what mstep's own replay charges
// (model/replay/replay.hpp):
//   - computation between calls (ticks as nanoseconds on the rank's clock) is `calc N`; mstep's
//     own flushes are dropped, their gaps kept; each rank starts with a calc of its MPI_Init exit
//     after the earliest rank's (the start skew the replay keeps);
//   - a matched blocking send/receive is `send Nb to P tag T` / `recv Nb from P tag T`, after the
//     operation before it (`requires`); an Isend/Irecv starts after the one before it starts
//     (`irequires` when that one is nonblocking too) and the Wait/Test that completed it is a
//     `calc 0` that requires it; a Sendrecv is a send and a receive joined by a `calc 0`;
//   - a collective is the point-to-point algorithm MPICH 4.0 runs by default
//     (model/replay/replay_collectives.hpp): each algorithm step's messages after the previous
//     step, joined by a `calc 0`; tags from 2^30 up name the instance and round;
//   - everything else (unmatched messages, Probe, Test/Iprobe that found nothing, communicator
//     calls, collectives mstep does not decompose) is a `calc` of its recorded duration.
// Units: bytes, and time in units of `units_per_second` (1e9: nanoseconds; LogGOPSim's parameters
// are integers, so a G below 1 ns/B needs picoseconds, 1e12, with L, o, g and G in ps too).
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "model/trace/trace_dir.hpp"

namespace mstep::model {

struct GoalSummary {
  std::uint64_t sends = 0, recvs = 0, calcs = 0;
  std::uint64_t collective_messages = 0;  // of the sends: those of decomposed collectives
  std::vector<int> cut_short;             // ranks whose trace ends before MPI_Finalize (or is missing)
  std::vector<int> multithreaded;         // ranks exported in file order although several threads recorded
};

GoalSummary write_goal(const TraceDir& trace, std::ostream& out, double units_per_second = 1e9);

}  // namespace mstep::model
