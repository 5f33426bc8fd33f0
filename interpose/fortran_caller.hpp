// The application's return address of the Fortran MPI call in progress on this thread. MPICH's
// Fortran bindings call the MPI_* wrappers from inside libmpichfort, so a wrapper's own return
// address names no line of the application, and finding it meant unwinding the stack on every
// Fortran call (about 0.5 us a call here). libmstep's Fortran entry points (fortran_entries.cpp:
// one for each wrapped function under MPICH's `use mpi`/mpif.h and mpi_f08 names, and the mpi_f08
// ones of wrappers_f08.cpp) note the caller's return address here before going on; the call-site
// lookup of a wrapper called from MPICH's Fortran layer (or from libmstep's mpi_f08 entry points)
// takes it, and clears it, instead. Calls from the rest of MPI (ROMIO's own collectives) unwind,
// so a note no wrapper took (the recorder off) is only ever taken by the next Fortran call's
// wrapper, which its own entry point has overwritten it for.
#pragma once

extern "C" {
extern __thread void* mstep_fortran_caller;
}

namespace mstep {

// The noted Fortran caller, cleared: one wrapper's record takes it.
inline void* take_fortran_caller() {
  void* caller = mstep_fortran_caller;
  mstep_fortran_caller = nullptr;
  return caller;
}

}  // namespace mstep

// In a Fortran entry point of libmstep's own, as its first statement.
#define MSTEP_FORTRAN_ENTRY() (mstep_fortran_caller = __builtin_return_address(0))
