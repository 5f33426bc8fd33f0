// Call sites: which line of the application made an MPI call. The hot path is a lookup of the
// return address in a per-thread direct-mapped cache (under 1 ns on a hit); unwinding and dladdr
// happen only the first time a site is seen. A Fortran call reaches its wrapper from inside
// libmpichfort: libmstep's Fortran entry point noted the application's return address on the way
// in (fortran_caller.hpp), which is looked up the same way. Calls from inside MPI without such a
// note, and every call when MSTEP_STACK_DEPTH > 1, unwind: a few frames to the application's,
// then a second per-thread cache keyed by both addresses.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "format/trace_format.hpp"

namespace mstep {

class CallsiteRegistry {
 public:
  // [begin, end) of code of an MPI library or of libmstep, whose frames are not the application's.
  struct Range {
    std::uintptr_t begin = 0, end = 0;
    bool fortran = false;  // MPICH's Fortran layer, or libmstep (its Fortran entry points)
  };

  // depth: frames to keep per site (1 = the immediate caller). Reads the loaded objects to know
  // which addresses belong to MPI libraries and to libmstep itself.
  void init(int depth);
  int depth() const { return depth_; }

  // The id of the site whose innermost return address is `ret` (the wrapper's caller).
  std::uint32_t lookup(void* ret) {
    const auto pc = reinterpret_cast<std::uintptr_t>(ret);
    CacheEntry& c = tls_cache_[(pc >> 2) & (kCacheSize - 1)];
    if (c.pc == pc && c.generation == generation_) return c.id;
    return slow_lookup(pc, c);
  }

  // Definitions of the sites seen since the last call, to be written with the next frame.
  std::vector<CallsiteDef> take_new();

 private:
  static constexpr std::size_t kCacheSize = 1024;
  struct CacheEntry {
    std::uintptr_t pc = 0;
    std::uint32_t id = 0;
    std::uint32_t generation = 0;
  };
  // A site reached through MPI's libraries: the return address in them and the application's.
  struct OuterEntry {
    std::uintptr_t pc = 0, app = 0;
    std::uint32_t id = 0;
    std::uint32_t generation = 0;
  };
  std::uint32_t slow_lookup(std::uintptr_t pc, CacheEntry& slot);
  std::uint32_t intern(std::span<const std::uintptr_t> pcs);
  enum class Module { Application, Mpi, Fortran };  // Fortran: MPICH's Fortran layer or libmstep
  Module module_of(std::uintptr_t pc) const;
  Module caller_module(std::uintptr_t pc);
  void add_skipped_modules();

  static thread_local CacheEntry tls_cache_[kCacheSize];
  static thread_local OuterEntry tls_outer_[kCacheSize];
  int depth_ = 1;
  std::uint32_t generation_ = 1;  // caches of a previous init() are stale
  // [begin, end) of the MPI libraries' and libmstep's code, appended to as libraries are loaded;
  // read without a lock.
  static constexpr std::size_t kMaxSkipped = 64;
  std::array<Range, kMaxSkipped> skipped_{};
  std::atomic<std::size_t> skipped_count_{0};
  std::atomic<unsigned long long> objects_added_{0};  // dlpi_adds when they were last read
  std::mutex mutex_;
  std::unordered_map<std::uint64_t, std::uint32_t> ids_;  // hash of the frames -> id
  std::vector<CallsiteDef> new_defs_;
  std::uint32_t next_id_ = 1;
};

}  // namespace mstep
