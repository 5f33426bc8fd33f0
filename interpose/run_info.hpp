// What the recorder learns about the run as a whole: the metadata file, host names, the MPI
// library, and the clock offsets of every rank to rank 0.
#pragma once

#include <string>
#include <vector>

#include <mpi.h>

#include "format/environment.hpp"
#include "format/trace_format.hpp"

namespace mstep {

struct RunInfo {
  int ranks = 0;
  std::vector<std::string> command;
  std::string mpi_library;
  std::vector<std::string> hosts;  // per rank
  std::string clock;
  double ticks_per_second = 0;
  int stack_depth = 1;
  bool complete = false;
  int write_failed_ranks = 0;  // ranks whose trace writes failed (their files end early)
  MpiEnvironment environment;  // rank 0's UCX_*, MPIR_CVAR_*, MPICH_*: the network the run had
  std::string delay;  // JSON object of the delay apparatus's settings; empty: none applied
  std::string collectives;  // JSON object of the substitute collectives; empty: MPICH's own
  std::string writer;       // "thread" or "inline": who wrote the frames (rank 0's)
  std::string compress;     // "now" or "later": compressed as written, or after the run (rank 0's)
};

// Writes meta.json atomically (temporary file, then rename). Returns false on failure, with
// errno set and no temporary file left.
bool write_run_info(const std::string& path, const RunInfo& info);

std::string program_name();                 // basename of the executable
std::vector<std::string> command_line();    // from /proc/self/cmdline
std::string mpi_library_version();          // MPI_Get_library_version, first line
std::vector<std::string> gather_hosts(MPI_Comm comm, int rank, int size);  // at rank 0; others empty
// Whether this rank runs on rank 0's host (the same processor name; collective over `comm`).
bool on_rank0_host(MPI_Comm comm, int rank);

// Ping-pong with rank 0 over `comm` (collective: every rank calls it). Returns this rank's offset
// to rank 0's CLOCK_MONOTONIC from the sample with the shortest round trip.
ClockSync sync_clock_with_rank0(MPI_Comm comm, int rank, int size, ClockSync::When when);

}  // namespace mstep
