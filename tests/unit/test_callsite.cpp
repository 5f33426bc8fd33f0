// The call-site cache: one id per distinct return address, stable across calls, defined once,
// with the module and offset that offline resolution needs.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <thread>

#include "interpose/callsite.hpp"
#include "interpose/fortran_caller.hpp"

using mstep::CallsiteRegistry;

namespace {

// Plays the part of a wrapper such as MPI_Send: it asks for its own return address.
[[gnu::noipa]] std::uint32_t wrapper(CallsiteRegistry& r) { return r.lookup(__builtin_return_address(0)); }
// Two application call sites of that wrapper. The empty asm after the call keeps it a real call
// (not a tail jump), so the return address lies inside these functions.
[[gnu::noipa]] std::uint32_t site_a(CallsiteRegistry& r) {
  const auto id = wrapper(r);
  asm volatile("" ::: "memory");
  return id;
}
[[gnu::noipa]] std::uint32_t site_b(CallsiteRegistry& r) {
  const auto id = wrapper(r);
  asm volatile("" ::: "memory");
  return id;
}

}  // namespace

TEST_CASE("a return address gets one id, defined once", "[callsite]") {
  CallsiteRegistry r;
  r.init(1);
  const auto a1 = site_a(r);
  const auto b1 = site_b(r);
  const auto a2 = site_a(r);
  CHECK(a1 != 0);
  CHECK(a1 == a2);
  CHECK(a1 != b1);
  const auto defs = r.take_new();
  REQUIRE(defs.size() == 2);
  CHECK(defs[0].id == a1);
  CHECK(defs[1].id == b1);
  REQUIRE(defs[0].frames.size() == 1);
  // The frame names this executable and an offset inside site_a.
  Dl_info self{};
  REQUIRE(dladdr(reinterpret_cast<void*>(&site_a), &self));
  CHECK(defs[0].frames[0].module.find("mstep_unit_tests") != std::string::npos);
  const auto site_a_offset = reinterpret_cast<std::uintptr_t>(&site_a) - reinterpret_cast<std::uintptr_t>(self.dli_fbase);
  CHECK(defs[0].frames[0].offset > site_a_offset);
  CHECK(defs[0].frames[0].offset < site_a_offset + 64);
  CHECK(r.take_new().empty());
}

TEST_CASE("ids are shared across threads, each thread caches its own", "[callsite]") {
  CallsiteRegistry r;
  r.init(1);
  const auto main_id = site_a(r);
  std::uint32_t other = 0;
  std::thread t([&] { other = site_a(r); });
  t.join();
  CHECK(other == main_id);
  CHECK(r.take_new().size() == 1);
}

TEST_CASE("depth 2 keeps the caller's caller", "[callsite]") {
  CallsiteRegistry r;
  r.init(2);
  const auto a = site_a(r);
  const auto b = site_b(r);
  CHECK(a != b);
  const auto defs = r.take_new();
  REQUIRE(defs.size() == 2);
  REQUIRE(defs[0].frames.size() == 2);
  // Innermost first: the return address inside site_a, then the one inside this test.
  Dl_info self{};
  REQUIRE(dladdr(reinterpret_cast<void*>(&site_a), &self));
  const auto site_a_offset = reinterpret_cast<std::uintptr_t>(&site_a) - reinterpret_cast<std::uintptr_t>(self.dli_fbase);
  CHECK(defs[0].frames[0].offset > site_a_offset);
  CHECK(defs[0].frames[0].offset < site_a_offset + 64);
  CHECK(defs[0].frames[1].offset != defs[1].frames[1].offset);
}

TEST_CASE("a call from MPICH's Fortran layer is placed at the caller its entry point noted", "[callsite]") {
  // Loaded after init(), as Fortran MPI code a program dlopens is: the lookup adds them then.
  CallsiteRegistry r;
  r.init(1);
  void* fortran = dlopen("libmpichfort.so.12", RTLD_NOW | RTLD_LOCAL);
  void* mpich = dlopen("libmpich.so.12", RTLD_NOW | RTLD_LOCAL);
  REQUIRE(fortran);
  REQUIRE(mpich);
  // Return addresses inside MPICH's Fortran layer (a wrapper called by mpi_send_) and inside the
  // rest of MPI (one called by ROMIO, say).
  const auto in_fortran = reinterpret_cast<std::uintptr_t>(dlsym(fortran, "mpi_send_")) + 16;
  const auto in_mpich = reinterpret_cast<std::uintptr_t>(dlsym(mpich, "PMPI_Send")) + 16;
  REQUIRE(in_fortran > 16);
  REQUIRE(in_mpich > 16);
  Dl_info self{};
  REQUIRE(dladdr(reinterpret_cast<void*>(&site_a), &self));
  const auto base = reinterpret_cast<std::uintptr_t>(self.dli_fbase);
  const auto app = reinterpret_cast<std::uintptr_t>(&site_a) + 5;  // "the application's return address"

  mstep_fortran_caller = reinterpret_cast<void*>(app);
  const auto id = r.lookup(reinterpret_cast<void*>(in_fortran));
  CHECK(mstep_fortran_caller == nullptr);  // taken
  auto defs = r.take_new();
  REQUIRE(defs.size() == 1);
  CHECK(defs[0].id == id);
  REQUIRE(defs[0].frames.size() == 1);
  CHECK(defs[0].frames[0].module.find("mstep_unit_tests") != std::string::npos);
  CHECK(defs[0].frames[0].offset == app - base);
  // The same Fortran site again: the same id, from the cache.
  mstep_fortran_caller = reinterpret_cast<void*>(app);
  CHECK(r.lookup(reinterpret_cast<void*>(in_fortran)) == id);
  CHECK(r.take_new().empty());

  // From the rest of MPI the note is not taken (it may be one no wrapper took): the stack is
  // unwound to this test's frames instead.
  mstep_fortran_caller = reinterpret_cast<void*>(app);
  const auto unwound = r.lookup(reinterpret_cast<void*>(in_mpich));
  CHECK(mstep_fortran_caller == reinterpret_cast<void*>(app));
  mstep_fortran_caller = nullptr;
  CHECK(unwound != id);
  defs = r.take_new();
  REQUIRE(defs.size() == 1);
  CHECK(defs[0].frames[0].module.find("mstep_unit_tests") != std::string::npos);
  CHECK(defs[0].frames[0].module.find("libmpich") == std::string::npos);
  dlclose(mpich);
  dlclose(fortran);
}
