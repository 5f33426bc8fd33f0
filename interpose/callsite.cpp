#include "interpose/callsite.hpp"

#include <atomic>
#include <climits>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>
#include <string>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

namespace mstep {

thread_local CallsiteRegistry::CacheEntry CallsiteRegistry::tls_cache_[kCacheSize];

namespace {

struct RangeCollector {
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>>* out;
  std::uintptr_t self_base;
};

int collect_ranges(dl_phdr_info* info, std::size_t, void* data) {
  auto* rc = static_cast<RangeCollector*>(data);
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  const char* base = std::strrchr(name, '/');
  base = base ? base + 1 : name;
  const bool mpi = std::strncmp(base, "libmpi", 6) == 0;
  // libmstep.so itself, when it is a shared object (the unit tests link this file into the
  // main program, whose frames are the application's).
  const bool self = *name && info->dlpi_addr == rc->self_base && rc->self_base != 0;
  if (!mpi && !self) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    rc->out->emplace_back(begin, begin + ph.p_memsz);
  }
  return 0;
}

std::string module_path(const char* fname) {
  if (fname && fname[0] == '/') return fname;
  char buf[PATH_MAX];
  // dladdr names the main program by its argv[0], relative to a directory the application may
  // have left since: the kernel knows its real path.
  if (!fname || !*fname || std::strcmp(fname, program_invocation_name) == 0) {
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) return std::string(buf, static_cast<std::size_t>(n));
  }
  if (fname && ::realpath(fname, buf)) return buf;
  return fname ? fname : "";
}

std::uint64_t hash_frames(const std::vector<std::uintptr_t>& pcs) {
  std::uint64_t h = 1469598103934665603ull;
  for (auto pc : pcs) h = (h ^ pc) * 1099511628211ull;
  return h;
}

}  // namespace

void CallsiteRegistry::init(int depth) {
  std::lock_guard lock(mutex_);
  depth_ = depth < 1 ? 1 : (depth > 32 ? 32 : depth);
  // The per-thread caches are shared by every registry of the process: a generation unique to
  // this init() keeps another (or an earlier) registry's entries from answering.
  static std::atomic<std::uint32_t> generations{0};
  generation_ = ++generations + 1;
  skipped_.clear();
  Dl_info self{};
  dladdr(reinterpret_cast<void*>(&collect_ranges), &self);
  RangeCollector rc{&skipped_, reinterpret_cast<std::uintptr_t>(self.dli_fbase)};
  // dlpi_addr of a shared object is its load bias; dli_fbase its base: equal for .so files.
  dl_iterate_phdr(collect_ranges, &rc);
}

bool CallsiteRegistry::in_skipped_module(std::uintptr_t pc) const {
  for (const auto& [b, e] : skipped_)
    if (pc >= b && pc < e) return true;
  return false;
}

std::uint32_t CallsiteRegistry::slow_lookup(std::uintptr_t pc, CacheEntry& slot) {
  std::vector<std::uintptr_t> pcs;
  if (depth_ == 1 && !in_skipped_module(pc)) {
    pcs.push_back(pc);
  } else {
    // Unwind past libmstep and the MPI libraries (Fortran bindings) to the application.
    void* frames[64];
    const int n = unw_backtrace(frames, 64);
    // Start at the wrapper's own return address when the unwinder saw it; the frames before it
    // are mstep's.
    int start = 0;
    for (int i = 0; i < n; ++i) {
      if (reinterpret_cast<std::uintptr_t>(frames[i]) == pc) {
        start = i;
        break;
      }
    }
    for (int i = start; i < n && static_cast<int>(pcs.size()) < depth_; ++i) {
      const auto f = reinterpret_cast<std::uintptr_t>(frames[i]);
      if (pcs.empty() && in_skipped_module(f)) continue;
      pcs.push_back(f);
    }
    if (pcs.empty()) pcs.push_back(pc);
  }
  const std::uint32_t id = intern(pcs);
  // Only a site fully named by its return address may be cached under it.
  if (depth_ == 1 && pcs.front() == pc) slot = CacheEntry{pc, id, generation_};
  return id;
}

std::uint32_t CallsiteRegistry::intern(const std::vector<std::uintptr_t>& pcs) {
  const std::uint64_t key = hash_frames(pcs);
  std::lock_guard lock(mutex_);
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  CallsiteDef def;
  def.id = next_id_++;
  for (auto pc : pcs) {
    Dl_info info{};
    CallsiteFrame f;
    if (dladdr(reinterpret_cast<void*>(pc), &info) && info.dli_fbase) {
      f.module = module_path(info.dli_fname);
      f.offset = pc - reinterpret_cast<std::uintptr_t>(info.dli_fbase);
    } else {
      f.offset = pc;
    }
    def.frames.push_back(std::move(f));
  }
  ids_.emplace(key, def.id);
  new_defs_.push_back(std::move(def));
  return next_id_ - 1;
}

std::vector<CallsiteDef> CallsiteRegistry::take_new() {
  std::lock_guard lock(mutex_);
  std::vector<CallsiteDef> out;
  out.swap(new_defs_);
  return out;
}

}  // namespace mstep
