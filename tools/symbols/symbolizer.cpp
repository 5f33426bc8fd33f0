#include "tools/symbols/symbolizer.hpp"

#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <limits>
#include <utility>
#include <vector>

namespace mstep {

namespace {

struct FreeDeleter {
  void operator()(void* p) const noexcept { std::free(p); }
};

// Itanium-mangled names ("_Z...") become "ns::f(int)"; C names and failures stay as they are.
std::string demangle(const char* name) {
  if (!name || !*name) return {};
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  std::unique_ptr<char, FreeDeleter> out(abi::__cxa_demangle(name, nullptr, nullptr, &status));
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

// Prefixes a DW_AT_name with the namespaces and classes around its declaration ("app::f"), for
// functions without a linkage name (static and inlined-only functions often have none). The
// declaration is reached through DW_AT_abstract_origin / DW_AT_specification.
std::string qualify(Dwarf_Die* die, std::string name) {
  Dwarf_Die decl = *die;
  for (int hop = 0; hop < 4; ++hop) {  // origin -> specification is at most a short chain
    Dwarf_Attribute attr;
    if (!dwarf_attr(&decl, DW_AT_abstract_origin, &attr) &&
        !dwarf_attr(&decl, DW_AT_specification, &attr))
      break;
    Dwarf_Die next;
    if (!dwarf_formref_die(&attr, &next)) break;
    decl = next;
  }
  Dwarf_Die* raw = nullptr;
  const int n = dwarf_getscopes_die(&decl, &raw);
  std::unique_ptr<Dwarf_Die, FreeDeleter> scopes(raw);  // [0] is decl itself, then its parents
  for (int i = 1; i < n; ++i) {
    Dwarf_Die* s = &scopes.get()[i];
    const int tag = dwarf_tag(s);
    if (tag != DW_TAG_namespace && tag != DW_TAG_class_type && tag != DW_TAG_structure_type &&
        tag != DW_TAG_union_type)
      continue;
    const char* part = dwarf_diename(s);
    name = std::string(part ? part : "(anonymous namespace)") + "::" + name;
  }
  return name;
}

// Name of a subprogram or inlined-subroutine DIE. The linkage name (found through
// DW_AT_specification / DW_AT_abstract_origin) is preferred: demangled, it carries the namespace,
// class and parameters that the plain DW_AT_name of a C++ function lacks.
std::string die_function_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (dwarf_attr_integrate(die, at, &attr))
      if (const char* s = dwarf_formstring(&attr)) return demangle(s);
  }
  if (dwarf_attr_integrate(die, DW_AT_name, &attr))
    if (const char* s = dwarf_formstring(&attr)) return qualify(die, s);
  return {};
}

// The innermost function (inlined or not) containing addr, from DWARF. With -O2 the line table
// row of a return address often belongs to an inlined callee; naming that callee keeps the
// function consistent with the file and line reported next to it.
std::string dwarf_function(Dwfl_Module* mod, Dwarf_Addr addr) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(mod, addr, &bias);
  if (!cu) return {};
  Dwarf_Die* raw = nullptr;
  const int n = dwarf_getscopes(cu, addr - bias, &raw);
  std::unique_ptr<Dwarf_Die, FreeDeleter> scopes(raw);  // malloc'd by libdw
  for (int i = 0; i < n; ++i) {
    const int tag = dwarf_tag(&scopes.get()[i]);
    if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
    std::string name = die_function_name(&scopes.get()[i]);
    if (!name.empty()) return name;
  }
  return {};
}

// The symbol-table name covering addr: what remains of a binary without debug information.
std::string symtab_function(Dwfl_Module* mod, Dwarf_Addr addr) {
  GElf_Off off = 0;
  GElf_Sym sym;
  const char* name = dwfl_module_addrinfo(mod, addr, &off, &sym, nullptr, nullptr, nullptr);
  return demangle(name);
}

// Lowest PT_LOAD vaddr, rounded down to a page: glibc's dladdr reports the module's mapping start
// (l_map_start) as dli_fbase, which is exactly that address plus the load bias. 4 KiB is the
// smallest page size; the first segment is aligned to at least its p_align, so the rounding is
// the same whatever the page size of the machine that recorded the trace. Also collects the
// executable segments, in ELF vaddrs.
bool scan_segments(Elf* elf, GElf_Addr& lowest_out,
                   std::vector<std::pair<std::uint64_t, std::uint64_t>>& text) {
  std::size_t n = 0;
  if (elf_getphdrnum(elf, &n) != 0) return false;
  GElf_Addr lowest = std::numeric_limits<GElf_Addr>::max();
  for (std::size_t i = 0; i < n; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
    if (ph.p_vaddr < lowest) lowest = ph.p_vaddr;
    if (ph.p_flags & PF_X) text.emplace_back(ph.p_vaddr, ph.p_vaddr + ph.p_memsz);
  }
  if (lowest == std::numeric_limits<GElf_Addr>::max() || text.empty()) return false;
  lowest_out = lowest & ~GElf_Addr{0xfff};
  return true;
}

// Standard offline callbacks (as eu-addr2line uses): separate debug files are looked up through
// .gnu_debuglink and /usr/lib/debug/.build-id (and debuginfod when DEBUGINFOD_URLS is set).
char* g_debuginfo_path = nullptr;  // nullptr: libdwfl's default search path
const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &g_debuginfo_path,
};

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string_view path_basename(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_mpi_module(std::string_view module) {
  // The basename only: a directory such as ~/libmpi-tests/ must not hide the application.
  const std::string_view base = path_basename(module);
  return base.find("libmpi") != std::string_view::npos ||
         base.find("libmstep") != std::string_view::npos;
}

void Symbolizer::DwflDeleter::operator()(Dwfl* d) const noexcept { dwfl_end(d); }

Symbolizer::Symbolizer() = default;
Symbolizer::~Symbolizer() = default;
Symbolizer::Symbolizer(Symbolizer&&) noexcept = default;
Symbolizer& Symbolizer::operator=(Symbolizer&&) noexcept = default;

Symbolizer::Module& Symbolizer::open(const std::string& path) {
  if (auto it = modules_.find(path); it != modules_.end()) return it->second;
  Module& m = modules_[path];  // stays a failure (dwfl == nullptr) unless all steps succeed
  if (path.empty()) return m;

  DwflPtr dwfl(dwfl_begin(&kOfflineCallbacks));
  if (!dwfl) return m;
  dwfl_report_begin(dwfl.get());
  const std::string name(path_basename(path));
  Dwfl_Module* mod = dwfl_report_offline(dwfl.get(), name.c_str(), path.c_str(), -1);
  if (dwfl_report_end(dwfl.get(), nullptr, nullptr) != 0 || !mod) return m;

  // libdwfl may place an ET_DYN module anywhere in its own address space: work in its terms,
  // ELF vaddr + bias, rather than assume where it put the module.
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(mod, &bias);
  GElf_Addr lowest = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> text;
  if (!elf || !scan_segments(elf, lowest, text)) return m;

  for (auto& [b, e] : text) {
    b += bias;
    e += bias;
  }
  m.text = std::move(text);
  m.base = lowest + bias;
  m.mod = mod;
  m.dwfl = std::move(dwfl);
  return m;
}

SourceLocation Symbolizer::resolve(const CallsiteFrame& f) {
  SourceLocation loc;
  loc.module = f.module;
  // Offset 0 is no return address (and offset - 1 would wrap); an empty module means dladdr
  // failed at run time and the offset is an absolute address nothing here can map.
  if (f.module.empty() || f.offset == 0) return loc;
  Module& m = open(f.module);
  if (!m.dwfl) return loc;

  // A return address follows the call instruction; the byte before it is still in the call,
  // which matters when the call is the last instruction of a function or of a line.
  const Dwarf_Addr addr = m.base + f.offset - 1;
  if (addr < m.base) return loc;  // the offset wrapped around
  bool in_text = false;
  for (const auto& [b, e] : m.text) in_text = in_text || (addr >= b && addr < e);
  if (!in_text || dwfl_addrmodule(m.dwfl.get(), addr) != m.mod) return loc;

  loc.function = dwarf_function(m.mod, addr);
  if (loc.function.empty()) loc.function = symtab_function(m.mod, addr);

  if (Dwfl_Line* line = dwfl_module_getsrc(m.mod, addr)) {
    int lineno = 0;
    const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
    if (file && *file && lineno > 0) {
      loc.file = file;
      // DWARF may record a path relative to the compilation directory: anchor it there so the
      // path names the file no matter where mstep runs. Builds with -fdebug-prefix-map (glibc)
      // record a relative comp_dir that libdw has already prepended: leave those alone.
      if (file[0] != '/')
        if (const char* dir = dwfl_line_comp_dir(line); dir && dir[0] == '/')
          loc.file = std::string(dir) + '/' + file;
      loc.line = lineno;
      loc.resolved = true;
    }
  }
  return loc;
}

std::string Symbolizer::describe(const CallsiteDef& site) {
  if (site.frames.empty()) return "?";
  const CallsiteFrame* pick = &site.frames.front();
  for (const auto& fr : site.frames) {
    if (!is_mpi_module(fr.module)) {
      pick = &fr;
      break;
    }
  }
  const SourceLocation loc = resolve(*pick);
  std::string where;
  if (loc.resolved)
    where = std::string(path_basename(loc.file)) + ':' + std::to_string(loc.line);
  else if (pick->module.empty())
    where = hex(pick->offset);
  else
    where = std::string(path_basename(pick->module)) + '+' + hex(pick->offset);
  if (loc.function.empty()) return where;
  return loc.function + " (" + where + ')';
}

}  // namespace mstep
