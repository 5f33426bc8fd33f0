// Ranks that made MPI calls from several threads (MPI_THREAD_MULTIPLE). Their calls overlap in
// time, so summing call durations counts an instant once per thread inside MPI, and the models,
// which replay one sequence of calls per rank, do not apply.
#pragma once

#include <span>
#include <vector>

#include "format/rank_trace.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model {

// Ranks (in rank order) with MPI calls recorded from more than one thread; trace flushes do not
// count as calls.
std::vector<int> multithreaded_ranks(std::span<const RankTrace* const> ranks);

// Seconds during which at least one thread of `rank` was inside an MPI call, each instant counted
// once (MPI_Init, MPI_Finalize and trace flushes excluded, as in the report's time in MPI).
double mpi_wall_seconds(const RankTrace& t, const Timeline& timeline, int rank);

}  // namespace mstep::model
