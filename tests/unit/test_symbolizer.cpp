// Symbolizer: resolves return addresses taken inside this very test binary, the way libmstep.so
// records them (dladdr: module path + offset from dli_fbase), so PIE and non-PIE builds of the
// test exercise both offset conventions.
#include <catch2/catch.hpp>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>
#include <string>
#include <unistd.h>

#include "tools/symbols/symbolizer.hpp"

// noipa (GCC) also forbids cloning and interprocedural shortcuts that could rename the function
// or turn the call into a tail call; clang only knows noinline.
#if defined(__clang__)
#define MSTEP_TEST_NOIPA [[gnu::noinline]]
#else
#define MSTEP_TEST_NOIPA [[gnu::noinline, gnu::noipa]]
#endif

namespace mstep_test {

struct Captured {
  void* ra = nullptr;
  int line = 0;
};

MSTEP_TEST_NOIPA void* return_address() { return __builtin_return_address(0); }

// The call and __LINE__ share a line; the store after the call keeps it from being a tail call.
MSTEP_TEST_NOIPA Captured capture_call_site() {
  Captured c;
  // clang-format off
  c.ra = return_address(); c.line = __LINE__;
  // clang-format on
  return c;
}

}  // namespace mstep_test

namespace {

// What the interposer records for a program counter (interpose/callsite.cpp).
mstep::CallsiteFrame frame_of(const void* pc) {
  Dl_info info{};
  REQUIRE(dladdr(pc, &info) != 0);
  REQUIRE(info.dli_fbase != nullptr);
  mstep::CallsiteFrame f;
  // dladdr names the main program by argv[0], possibly relative: use the kernel's path.
  std::string path = info.dli_fname ? info.dli_fname : "";
  if (path.empty() || path[0] != '/') {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    REQUIRE(n > 0);
    path.assign(buf, static_cast<std::size_t>(n));
  }
  f.module = path;
  f.offset = reinterpret_cast<std::uintptr_t>(pc) - reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  return f;
}

std::string self_path() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

TEST_CASE("symbolizer resolves a return address in the test binary", "[symbols]") {
  const mstep_test::Captured c = mstep_test::capture_call_site();
  const mstep::CallsiteFrame f = frame_of(c.ra);
  CHECK(f.module == self_path());

  mstep::Symbolizer sym;
  const mstep::SourceLocation loc = sym.resolve(f);
  INFO("module " << f.module << " offset " << f.offset << " -> " << loc.function << " "
                 << loc.file << ":" << loc.line);
  REQUIRE(loc.resolved);
  CHECK(mstep::path_basename(loc.file) == "test_symbolizer.cpp");
  CHECK(loc.file.front() == '/');
  CHECK(loc.line == c.line);
  CHECK(loc.function == "mstep_test::capture_call_site()");
  CHECK(loc.module == f.module);

  // The second lookup goes through the cached Dwfl and must agree.
  const mstep::SourceLocation again = sym.resolve(f);
  CHECK(again.resolved);
  CHECK(again.line == loc.line);
  CHECK(again.function == loc.function);
}

TEST_CASE("symbolizer fails softly on modules it cannot read", "[symbols]") {
  mstep::Symbolizer sym;
  for (const char* module : {"/nonexistent/dir/libnothing.so", "/etc/passwd", "/", ""}) {
    INFO(module);
    mstep::SourceLocation loc;
    REQUIRE_NOTHROW(loc = sym.resolve({module, 0x1234}));
    CHECK_FALSE(loc.resolved);
    CHECK(loc.function.empty());
    CHECK(loc.line == 0);
    CHECK(loc.module == module);
  }
  // A failed module is remembered, and asking again stays harmless.
  CHECK_FALSE(sym.resolve({"/nonexistent/dir/libnothing.so", 0x1234}).resolved);
}

TEST_CASE("symbolizer rejects offsets outside any function", "[symbols]") {
  mstep::Symbolizer sym;
  const std::string self = self_path();
  // 0: no return address; 1: the ELF header; beyond the module: nothing mapped there.
  for (std::uint64_t off : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1} << 40,
                            ~std::uint64_t{0}}) {
    INFO("offset " << off);
    mstep::SourceLocation loc;
    REQUIRE_NOTHROW(loc = sym.resolve({self, off}));
    CHECK_FALSE(loc.resolved);
    CHECK(loc.function.empty());
  }
}

TEST_CASE("symbolizer names functions of a library without debug info", "[symbols]") {
  // libdw is loaded by this binary; Debian ships it stripped (.dynsym only) unless a dbgsym
  // package is installed. Take the library's own definition, not a PLT stub in the executable.
  void* h = dlopen("libdw.so.1", RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h != nullptr);
  void* fn = dlsym(h, "dwfl_begin");
  REQUIRE(fn != nullptr);
  mstep::CallsiteFrame f = frame_of(fn);
  dlclose(h);
  CHECK(mstep::path_basename(f.module).substr(0, 5) == "libdw");
  f.offset += 1;  // as if a call returned to the function's first byte

  mstep::Symbolizer sym;
  const mstep::SourceLocation loc = sym.resolve(f);
  CHECK(loc.function == "dwfl_begin");
  if (!loc.resolved) CHECK(loc.line == 0);
}

TEST_CASE("describe names the innermost frame outside MPI", "[symbols]") {
  const mstep_test::Captured c = mstep_test::capture_call_site();
  const mstep::CallsiteFrame app = frame_of(c.ra);
  const mstep::CallsiteFrame mpi{"/usr/lib/x86_64-linux-gnu/libmpi.so.12", 0x1234};
  const mstep::CallsiteFrame tool{"/opt/mstep/lib/libmstep.so", 0x99};
  const std::string expected =
      "mstep_test::capture_call_site() (test_symbolizer.cpp:" + std::to_string(c.line) + ")";

  mstep::Symbolizer sym;
  CHECK(sym.describe({1, {tool, mpi, app}}) == expected);
  CHECK(sym.describe({2, {app, mpi}}) == expected);
  // Only MPI frames: the innermost one, unresolvable here, by module and offset.
  CHECK(sym.describe({3, {mpi, tool}}) == "libmpi.so.12+0x1234");
  CHECK(sym.describe({4, {{"", 0xdead}}}) == "0xdead");
  CHECK(sym.describe({5, {}}) == "?");
}

TEST_CASE("path helpers", "[symbols]") {
  CHECK(mstep::path_basename("/home/u/src/ring.c") == "ring.c");
  CHECK(mstep::path_basename("ring.c") == "ring.c");
  CHECK(mstep::path_basename("/dir/") == "");
  CHECK(mstep::is_mpi_module("/usr/lib/x86_64-linux-gnu/libmpich.so.12"));
  CHECK(mstep::is_mpi_module("/usr/lib/libmpi.so.40"));
  CHECK(mstep::is_mpi_module("/opt/mstep/lib/libmstep.so"));
  CHECK_FALSE(mstep::is_mpi_module("/home/u/libmpi-tests/ring"));
  CHECK_FALSE(mstep::is_mpi_module("/usr/lib/x86_64-linux-gnu/libc.so.6"));
}
