// Offline call-site resolution: turns the (module path, offset) frames that libmstep.so records
// into function, source file and line, reading the modules' ELF/DWARF with elfutils libdwfl.
//
// Offsets are what the interposer computed at run time: return address minus dladdr's dli_fbase.
// glibc's dli_fbase is the lowest mapped address of the module (l_map_start), not its load bias:
//  - PIE executables and shared objects are linked at 0, so offset == ELF virtual address;
//  - non-PIE executables are mapped at their linked address (e.g. 0x400000) and dli_fbase is that
//    address, so offset == ELF vaddr - (first PT_LOAD vaddr, page-aligned).
// The symbolizer handles both by always adding the page-aligned lowest PT_LOAD vaddr back.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "format/trace_format.hpp"

// libdwfl's handle types, declared here so that users of this header need no elfutils headers.
struct Dwfl;
struct Dwfl_Module;

namespace mstep {

struct SourceLocation {
  std::string function;  // demangled; may be set from the symbol table even when !resolved
  std::string file;      // source path as recorded in DWARF (made absolute with the CU's comp_dir)
  int line = 0;
  std::string module;    // the frame's module path
  bool resolved = false; // true when file and line were found
};

// "ring.c" for "/home/u/src/ring.c"; the whole string when it has no '/'.
std::string_view path_basename(std::string_view path);

// A frame lies in the MPI library or in the tool itself (module basename contains "libmpi" or
// "libmstep"): describe() skips such frames to name the application's call site.
bool is_mpi_module(std::string_view module);

// Not thread-safe: it caches one Dwfl session per module path, created on first use. Lookups
// never throw; a module that cannot be opened is remembered as such and not retried.
class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;
  Symbolizer(Symbolizer&&) noexcept;
  Symbolizer& operator=(Symbolizer&&) noexcept;

  // Resolves one recorded return address (the call's line is that of offset - 1).
  SourceLocation resolve(const CallsiteFrame& f);

  // "main (ring.c:42)" for the innermost frame outside MPI/libmstep, or the innermost frame if
  // all are inside; "main (ring+0x1189)" with a function but no line; "ring+0x1189" with nothing;
  // "?" for a call site without frames.
  std::string describe(const CallsiteDef& site);

 private:
  struct DwflDeleter {
    void operator()(Dwfl* d) const noexcept;
  };
  using DwflPtr = std::unique_ptr<Dwfl, DwflDeleter>;

  // One opened module; dwfl == nullptr records that opening it failed.
  struct Module {
    DwflPtr dwfl;
    Dwfl_Module* mod = nullptr;  // owned by dwfl
    std::uint64_t base = 0;      // Dwfl address of the ELF's page-aligned lowest PT_LOAD vaddr
    // Executable PT_LOAD segments [begin, end) as Dwfl addresses: the only places a return
    // address can be. DWARF of discarded COMDAT copies claims ranges at address 0, which would
    // otherwise give a bogus file:line to garbage offsets.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> text;
  };

  Module& open(const std::string& path);

  std::map<std::string, Module, std::less<>> modules_;
};

}  // namespace mstep
