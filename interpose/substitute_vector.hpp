// The reduction vectors of libmstep's substitute MPI_Allreduce, MPI_Reduce and
// MPI_Reduce_scatter(_block) (interpose/substitute_allreduce.cpp, substitute_reduce.cpp,
// substitute_reduce_scatter.cpp): where a datatype's bytes lie, scratch vectors kept between
// calls, and a copy on this rank.
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

// The reductions' scratch vectors, two per thread, kept between calls (a collective in a loop
// allocates once; a fresh vector a call, zeroed, cost a 64 KiB MPI_Reduce_scatter_block 1 ms a call
// where glibc mapped and unmapped it each time). Their contents are whatever the last call left.
inline thread_local std::vector<char> g_scratch[2];

inline char* scratch(const Span& s, int slot = 0) {
  const auto need = static_cast<std::size_t>(s.bytes > 0 ? s.bytes : 1);
  std::vector<char>& v = g_scratch[slot];
  if (v.size() < need) v.resize(need);
  return v.data() - s.lb;  // addressed as the datatype addresses its buffer
}

// MPICH's fold of n ranks into a core of pof2 = 2^k for MPI_Allreduce and MPI_Reduce_scatter (its
// MPI_Reduce folds the other way): of the first 2 rem ranks (rem = n - pof2) each even one hands
// its vector to the odd one above it, which reduces it into its own, the lower rank's data first.
// core_rank is a core rank's rank in the communicator.
inline int core_rank(int newrank, int rem) { return newrank < rem ? newrank * 2 + 1 : newrank + rem; }

// The fold on this rank: `vec` sent, or `tmp` received and reduced into `vec`. Returns this rank's
// rank in the core, -1 where it was folded away.
inline int fold_into_core(const Wire& w, Rc& rc, char* vec, char* tmp, int count, MPI_Datatype type, MPI_Op op, int me,
                          int rem) {
  if (me >= 2 * rem) return me - rem;
  if (me % 2 == 0) {
    rc(w.send(vec, count, type, me + 1));
    return -1;
  }
  rc(w.recv(tmp, count, type, me - 1));
  rc(PMPI_Reduce_local(tmp, vec, count, type, op));
  return me / 2;
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
