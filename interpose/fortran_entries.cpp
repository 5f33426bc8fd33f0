// Fortran entry points that only note their caller (interpose/fortran_caller.hpp) and jump on to
// MPICH's own: mpi_<name>_ (`use mpi` and mpif.h) and mpi_<name>_f08ts_ (mpi_f08's functions with a
// buffer) for every function libmstep wraps, listed at configure time from format/ops.def
// (fortran_entries.inc). Each is a few instructions ending in a jump, so the arguments, however
// many and of whatever kind, reach MPICH exactly as the application passed them, and MPICH's
// return goes straight back to the application.
//
// MPICH's function is looked up at an entry's first call, not when libmstep is loaded: a program
// may dlopen its Fortran MPI code (a Python extension, a plugin) after that, with RTLD_LOCAL, so
// that libmpichfort is in no global scope that dlsym(RTLD_NEXT) searches; then every loaded object
// is asked in turn. A name no loaded library has cannot have been linked by the application; its
// entry says so and aborts rather than jumping nowhere.
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "interpose/fortran_caller.hpp"

namespace {

constexpr const char* kFortranNames[] = {
#define MSTEP_FORTRAN(index, name) name,
#include "fortran_entries.inc"
#undef MSTEP_FORTRAN
};
constexpr unsigned kFortranCount = sizeof kFortranNames / sizeof kFortranNames[0];

[[noreturn]] void missing_fortran_entry() {
  std::fputs("mstep: a Fortran MPI function that no loaded MPI library has was called through libmstep\n", stderr);
  std::abort();
}

int collect_object(dl_phdr_info* info, std::size_t, void* data) {
  if (info->dlpi_name && *info->dlpi_name) static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
  return 0;
}

// `name` in a loaded object other than libmstep, looked up in each object's own scope (its
// dependencies included). The names are copied first: dlopen inside dl_iterate_phdr's callback
// would take the loader's locks again.
void* find_in_loaded_objects(const char* name) {
  std::vector<std::string> objects;
  dl_iterate_phdr(collect_object, &objects);
  Dl_info self{};
  dladdr(reinterpret_cast<void*>(&collect_object), &self);
  for (const std::string& object : objects) {
    void* handle = dlopen(object.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) continue;
    void* found = dlsym(handle, name);
    dlclose(handle);
    Dl_info where{};
    if (found && dladdr(found, &where) && where.dli_fbase != self.dli_fbase) return found;
  }
  return nullptr;
}

}  // namespace

extern "C" {

// MPICH's function of each entry point, by index; until found, the resolver below (the table is
// in the assembly, so that it holds the resolver from the start, before any constructor).
extern void* mstep_fortran_real[];

// Called by the resolver with the entry's index: MPICH's function, remembered.
__attribute__((visibility("hidden"))) void* mstep_fortran_resolve(unsigned index) {
  if (index >= kFortranCount) missing_fortran_entry();
  void* real = dlsym(RTLD_NEXT, kFortranNames[index]);
  if (!real) real = find_in_loaded_objects(kFortranNames[index]);
  if (!real) return reinterpret_cast<void*>(&missing_fortran_entry);
  __atomic_store_n(&mstep_fortran_real[index], real, __ATOMIC_RELEASE);
  return real;
}

}  // extern "C"

#if defined(__x86_64__)
// An entry point. r10 and r11 carry no argument in the System V calling convention (r10: a nested
// function's static chain, which no call into MPI has). The return address is at (%rsp) on entry;
// r11 takes the entry's index to the resolver.
#define MSTEP_FORTRAN(index, name)                                  \
  asm(".text\n"                                                     \
      ".globl " name "\n"                                           \
      ".type " name ", @function\n"                                 \
      ".p2align 4\n" name ":\n"                                     \
      "  movq mstep_fortran_caller@gottpoff(%rip), %r11\n"          \
      "  movq (%rsp), %r10\n"                                       \
      "  movq %r10, %fs:(%r11)\n"                                   \
      "  movl $" #index ", %r11d\n"                                 \
      "  jmp *mstep_fortran_real+8*" #index "(%rip)\n"              \
      ".size " name ", .-" name "\n");
#include "fortran_entries.inc"
#undef MSTEP_FORTRAN

// The resolver: every register that may carry an argument saved (rax: the vector count of a
// variadic call; xmm0-7), mstep_fortran_resolve(r11) called on a 16-byte aligned stack, all
// restored, then on to what it returned.
asm(".text\n"
    ".p2align 4\n"
    ".type mstep_fortran_resolve_jump, @function\n"
    "mstep_fortran_resolve_jump:\n"
    "  pushq %rbp\n"
    "  movq %rsp, %rbp\n"
    "  subq $192, %rsp\n"
    "  movq %rdi, 0(%rsp)\n"
    "  movq %rsi, 8(%rsp)\n"
    "  movq %rdx, 16(%rsp)\n"
    "  movq %rcx, 24(%rsp)\n"
    "  movq %r8, 32(%rsp)\n"
    "  movq %r9, 40(%rsp)\n"
    "  movq %rax, 48(%rsp)\n"
    "  movdqu %xmm0, 64(%rsp)\n"
    "  movdqu %xmm1, 80(%rsp)\n"
    "  movdqu %xmm2, 96(%rsp)\n"
    "  movdqu %xmm3, 112(%rsp)\n"
    "  movdqu %xmm4, 128(%rsp)\n"
    "  movdqu %xmm5, 144(%rsp)\n"
    "  movdqu %xmm6, 160(%rsp)\n"
    "  movdqu %xmm7, 176(%rsp)\n"
    "  movl %r11d, %edi\n"
    "  call mstep_fortran_resolve\n"
    "  movq %rax, %r11\n"
    "  movq 0(%rsp), %rdi\n"
    "  movq 8(%rsp), %rsi\n"
    "  movq 16(%rsp), %rdx\n"
    "  movq 24(%rsp), %rcx\n"
    "  movq 32(%rsp), %r8\n"
    "  movq 40(%rsp), %r9\n"
    "  movq 48(%rsp), %rax\n"
    "  movdqu 64(%rsp), %xmm0\n"
    "  movdqu 80(%rsp), %xmm1\n"
    "  movdqu 96(%rsp), %xmm2\n"
    "  movdqu 112(%rsp), %xmm3\n"
    "  movdqu 128(%rsp), %xmm4\n"
    "  movdqu 144(%rsp), %xmm5\n"
    "  movdqu 160(%rsp), %xmm6\n"
    "  movdqu 176(%rsp), %xmm7\n"
    "  leave\n"
    "  jmp *%r11\n"
    ".size mstep_fortran_resolve_jump, .-mstep_fortran_resolve_jump\n");

// The table, each entry the resolver until its first call.
#define MSTEP_FORTRAN(index, name) "  .quad mstep_fortran_resolve_jump\n"
asm(".data\n"
    ".p2align 3\n"
    ".globl mstep_fortran_real\n"
    ".hidden mstep_fortran_real\n"
    ".type mstep_fortran_real, @object\n"
    "mstep_fortran_real:\n"
#include "fortran_entries.inc"
    ".size mstep_fortran_real, .-mstep_fortran_real\n"
    ".text\n");
#undef MSTEP_FORTRAN
#else
#error "libmstep's Fortran entry points are written for x86-64"
#endif
