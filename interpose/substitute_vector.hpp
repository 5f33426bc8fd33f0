// The reduction vectors of libmstep's substitute MPI_Allreduce and MPI_Reduce
// (interpose/substitute_allreduce.cpp, substitute_reduce.cpp): where a datatype's bytes lie, a
// scratch vector kept between calls, and a copy on this rank.
#pragma once

#include <cstring>
#include <vector>

#include <mpi.h>

#include "interpose/substitute_wire.hpp"

namespace mstep {

// A buffer of `count` elements of a datatype: where its bytes start relative to the buffer's
// address (true lower bound) and how many there are (true extent of the last plus the strides).
struct Span {
  MPI_Aint stride = 0;  // extent
  MPI_Aint lb = 0;      // true lower bound
  MPI_Aint bytes = 0;
  bool contiguous = false;  // the elements' bytes are one run: a copy is a memcpy
};

inline Span span_of(MPI_Datatype type, int count) {
  Span s;
  MPI_Aint lb = 0, true_extent = 0;
  PMPI_Type_get_extent(type, &lb, &s.stride);
  PMPI_Type_get_true_extent(type, &s.lb, &true_extent);
  s.bytes = true_extent + static_cast<MPI_Aint>(count - 1) * s.stride;
  int size = 0;
  PMPI_Type_size(type, &size);
  s.contiguous = static_cast<MPI_Aint>(size) * count == s.bytes && (count == 1 || s.stride == size);
  return s;
}

// The reduction's scratch vector, one per thread, kept between calls (a collective in a loop
// allocates once).
inline thread_local std::vector<char> g_scratch;

inline char* scratch(const Span& s) {
  const auto need = static_cast<std::size_t>(s.bytes > 0 ? s.bytes : 1);
  if (g_scratch.size() < need) g_scratch.resize(need);
  return g_scratch.data() - s.lb;  // addressed as the datatype addresses its buffer
}

// count elements from `from` to `to` on this rank: a memcpy, or MPICH's own copy through a message
// to itself (on the private communicator, outside the delay apparatus).
inline int copy(const void* from, void* to, int count, MPI_Datatype type, const Span& s, MPI_Comm pc, int me) {
  if (s.contiguous) {
    std::memcpy(static_cast<char*>(to) + s.lb, static_cast<const char*>(from) + s.lb, static_cast<std::size_t>(s.bytes));
    return MPI_SUCCESS;
  }
  return PMPI_Sendrecv(from, count, type, me, kSubstituteTag, to, count, type, me, kSubstituteTag, pc, MPI_STATUS_IGNORE);
}

}  // namespace mstep
