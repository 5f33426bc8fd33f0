#include "interpose/callsite.hpp"

#include "interpose/fortran_caller.hpp"

#include <algorithm>
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

extern "C" {
__thread void* mstep_fortran_caller = nullptr;  // fortran_caller.hpp
}

namespace mstep {

thread_local CallsiteRegistry::CacheEntry CallsiteRegistry::tls_cache_[kCacheSize];
thread_local CallsiteRegistry::OuterEntry CallsiteRegistry::tls_outer_[kCacheSize];

namespace {

struct RangeCollector {
  std::vector<CallsiteRegistry::Range>* out;
  std::uintptr_t self_base;
  unsigned long long adds = 0;  // objects the process has loaded so far
};

int collect_ranges(dl_phdr_info* info, std::size_t, void* data) {
  auto* rc = static_cast<RangeCollector*>(data);
  rc->adds = info->dlpi_adds;
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  const char* base = std::strrchr(name, '/');
  base = base ? base + 1 : name;
  const bool mpi = std::strncmp(base, "libmpi", 6) == 0;
  // libmstep.so itself, when it is a shared object (the unit tests link this file into the
  // main program, whose frames are the application's).
  const bool self = *name && info->dlpi_addr == rc->self_base && rc->self_base != 0;
  if (!mpi && !self) return 0;
  // MPICH's Fortran layer and libmstep (its Fortran entry points): a call from there is a Fortran
  // call, which noted its caller.
  const bool fortran = self || std::strncmp(base, "libmpichfort", 12) == 0 || std::strncmp(base, "libmpifort", 10) == 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    rc->out->push_back(CallsiteRegistry::Range{begin, begin + ph.p_memsz, fortran});
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

std::uint64_t hash_frames(std::span<const std::uintptr_t> pcs) {
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
  skipped_count_.store(0, std::memory_order_relaxed);
  add_skipped_modules();
}

// The MPI libraries and libmstep loaded now, appended to the ranges (those known already stay).
// Under mutex_; readers go without a lock, so a range is written before the count that shows it.
void CallsiteRegistry::add_skipped_modules() {
  Dl_info self{};
  dladdr(reinterpret_cast<void*>(&collect_ranges), &self);
  std::vector<Range> found;
  RangeCollector rc{&found, reinterpret_cast<std::uintptr_t>(self.dli_fbase)};
  // dlpi_addr of a shared object is its load bias; dli_fbase its base: equal for .so files.
  dl_iterate_phdr(collect_ranges, &rc);
  objects_added_.store(rc.adds, std::memory_order_relaxed);
  std::size_t n = skipped_count_.load(std::memory_order_relaxed);
  for (const auto& range : found) {
    if (n == kMaxSkipped) break;
    const auto known = skipped_.begin() + static_cast<std::ptrdiff_t>(n);
    if (std::find_if(skipped_.begin(), known, [&](const Range& r) { return r.begin == range.begin; }) != known)
      continue;
    skipped_[n++] = range;
  }
  skipped_count_.store(n, std::memory_order_release);
}

CallsiteRegistry::Module CallsiteRegistry::module_of(std::uintptr_t pc) const {
  const std::size_t n = skipped_count_.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i)
    if (pc >= skipped_[i].begin && pc < skipped_[i].end) return skipped_[i].fortran ? Module::Fortran : Module::Mpi;
  return Module::Application;
}

namespace {
int count_adds(dl_phdr_info* info, std::size_t, void* data) {
  *static_cast<unsigned long long*>(data) = info->dlpi_adds;
  return 1;  // the count is the same in every object's entry
}
}  // namespace

// Where a wrapper's return address lies. One outside the known MPI libraries is seen here for
// the first time (then it is cached): an MPI library dlopen'ed since (a Python extension's Fortran
// MPI code and its libmpichfort) is added first.
CallsiteRegistry::Module CallsiteRegistry::caller_module(std::uintptr_t pc) {
  const Module m = module_of(pc);
  if (m != Module::Application) return m;
  unsigned long long adds = 0;
  dl_iterate_phdr(count_adds, &adds);
  if (adds == objects_added_.load(std::memory_order_relaxed)) return m;
  {
    std::lock_guard lock(mutex_);
    add_skipped_modules();
  }
  return module_of(pc);
}

std::uint32_t CallsiteRegistry::slow_lookup(std::uintptr_t pc, CacheEntry& slot) {
  if (depth_ == 1) {
    const Module m = caller_module(pc);
    const bool direct = m == Module::Application;
    // From MPICH's Fortran layer or libmstep's: a Fortran call noted its caller on the way in
    // (libmstep's Fortran entry points, fortran_caller.hpp), which is then the site, cached as a
    // direct one. (From the rest of MPI, ROMIO's own calls: unwound.)
    const auto fortran = reinterpret_cast<std::uintptr_t>(m == Module::Fortran ? take_fortran_caller() : nullptr);
    if (direct || fortran) {
      const std::uintptr_t site = direct ? pc : fortran;
      CacheEntry& entry = direct ? slot : tls_cache_[(site >> 2) & (kCacheSize - 1)];
      if (!direct && entry.pc == site && entry.generation == generation_) return entry.id;
      const std::uint32_t id = intern(std::span<const std::uintptr_t>(&site, 1));
      entry = CacheEntry{site, id, generation_};
      return id;
    }
  }
  // Unwind past libmstep and the MPI libraries to the application: calls MPI makes of its own
  // (ROMIO's collectives), Fortran calls that came in by no entry point of libmstep's, and every
  // call when MSTEP_STACK_DEPTH > 1. For one frame kept only the first few are unwound: the whole
  // stack of a deep code costs microseconds a call.
  constexpr int kShallow = 12, kDeep = 64;
  void* frames[kDeep];
  std::uintptr_t pcs[32];
  int kept = 0;
  for (int limit = depth_ == 1 ? kShallow : kDeep;; limit = kDeep) {
    const int n = unw_backtrace(frames, limit);
    // Start at the wrapper's own return address when the unwinder saw it; the frames before it
    // are mstep's.
    int start = 0;
    for (int i = 0; i < n; ++i) {
      if (reinterpret_cast<std::uintptr_t>(frames[i]) == pc) {
        start = i;
        break;
      }
    }
    kept = 0;
    for (int i = start; i < n && kept < depth_; ++i) {
      const auto f = reinterpret_cast<std::uintptr_t>(frames[i]);
      if (kept == 0 && module_of(f) != Module::Application) continue;
      pcs[kept++] = f;
    }
    if (kept == depth_ || n < limit || limit == kDeep) break;
  }
  if (kept == 0) pcs[kept++] = pc;
  if (depth_ != 1) return intern(std::span<const std::uintptr_t>(pcs, static_cast<std::size_t>(kept)));
  // One frame through MPI's libraries: the site is the pair (return address in them, the
  // application's), cached per thread as the direct calls are.
  OuterEntry& outer = tls_outer_[((pc >> 2) ^ (pcs[0] >> 2) * 0x9E3779B1u) & (kCacheSize - 1)];
  if (outer.pc == pc && outer.app == pcs[0] && outer.generation == generation_) return outer.id;
  const std::uint32_t id = intern(std::span<const std::uintptr_t>(pcs, 1));
  outer = OuterEntry{pc, pcs[0], id, generation_};
  return id;
}

std::uint32_t CallsiteRegistry::intern(std::span<const std::uintptr_t> pcs) {
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
