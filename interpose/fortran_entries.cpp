// Fortran entry points that only note their caller (interpose/fortran_caller.hpp) and jump on to
// MPICH's own: mpi_<name>_ (`use mpi` and mpif.h) and mpi_<name>_f08ts_ (mpi_f08's functions with a
// buffer) for every function libmstep wraps, listed at configure time from format/ops.def
// (fortran_entries.inc). Each is three instructions ending in a jump, so the arguments, however
// many and of whatever kind, reach MPICH exactly as the application passed them, and MPICH's
// return goes straight back to the application. MPICH's function is looked up once, when libmstep
// is loaded (dlsym RTLD_NEXT); a name MPICH lacks cannot have been linked by the application, and
// its entry says so and aborts rather than jumping nowhere.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "interpose/fortran_caller.hpp"

namespace {

constexpr const char* kFortranNames[] = {
#define MSTEP_FORTRAN(index, name) name,
#include "fortran_entries.inc"
#undef MSTEP_FORTRAN
};
constexpr std::size_t kFortranCount = sizeof kFortranNames / sizeof kFortranNames[0];

[[noreturn]] void missing_fortran_entry() {
  std::fputs("mstep: a Fortran MPI function that this MPI library lacks was called through libmstep\n", stderr);
  std::abort();
}

}  // namespace

extern "C" {
// MPICH's function of each entry point, by index.
__attribute__((visibility("hidden"))) void* mstep_fortran_real[kFortranCount];
}

namespace {

__attribute__((constructor)) void resolve_fortran_entries() {
  for (std::size_t i = 0; i < kFortranCount; ++i) {
    void* real = dlsym(RTLD_NEXT, kFortranNames[i]);
    mstep_fortran_real[i] = real ? real : reinterpret_cast<void*>(&missing_fortran_entry);
  }
}

}  // namespace

#if defined(__x86_64__)
// r10 and r11 carry no argument in the System V calling convention (r10: a nested function's
// static chain, which no call into MPI has). The return address is at (%rsp) on entry.
#define MSTEP_FORTRAN(index, name)                                  \
  asm(".text\n"                                                     \
      ".globl " name "\n"                                           \
      ".type " name ", @function\n"                                 \
      ".p2align 4\n" name ":\n"                                     \
      "  movq mstep_fortran_caller@gottpoff(%rip), %r11\n"          \
      "  movq (%rsp), %r10\n"                                       \
      "  movq %r10, %fs:(%r11)\n"                                   \
      "  jmp *mstep_fortran_real+8*" #index "(%rip)\n"              \
      ".size " name ", .-" name "\n");
#include "fortran_entries.inc"
#undef MSTEP_FORTRAN
#else
#error "libmstep's Fortran entry points are written for x86-64"
#endif
