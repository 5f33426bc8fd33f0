// Internal to the replay (model/replay/replay.cpp): the trace flattened once into compact arrays, so
// that the replay loop itself only indexes arrays. Built by make_plan (model/replay/replay_setup.cpp).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <sys/mman.h>

#include "model/replay/replay.hpp"
#include "model/replay/replay_collectives.hpp"

namespace mstep::model::detail {

inline constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
// A time not known yet (a partner has not got there in the replay).
inline constexpr double kUnknown = -std::numeric_limits<double>::infinity();

// For the arrays that grow with the trace: blocks of 4 MiB and more are 2 MiB-aligned and asked
// to be backed by transparent huge pages, which makes first touch (and the loop's TLB misses)
// much cheaper. Smaller blocks come from the ordinary allocator.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < 2 * kHuge) return std::allocator<T>{}.allocate(n);
    const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure changes nothing
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < 2 * kHuge) std::allocator<T>{}.deallocate(p, n);
    else std::free(p);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
};
template <class T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

// How a message's send behaves whatever its size.
enum SendMode : std::uint8_t { kBySize = 0, kSynchronous = 1, kBuffered = 2 };

// The replay's state of one matched message (index = its index in Matching::messages): the two
// times the partners exchange, and nothing else, so that the randomly accessed array stays small.
// Sizes and peers come from the records themselves (or Matching::messages, rarely).
struct PlanMsg {
  double ts = kUnknown;  // predicted send start
  double tr = kUnknown;  // predicted receive post
};
static_assert(sizeof(PlanMsg) == 16);

// One collective instance: the k-th collective on one communicator.
struct PlanInstance {
  CollShape shape;
  std::uint32_t rounds = 0;      // slots = rounds * shape.n
  std::uint32_t registered = 0;  // member records found
  std::uint32_t finished = 0;    // members done in the replay
  std::uint32_t storage = kNone; // slot storage while in use
  std::uint64_t member_base = 0; // first of shape.n entries in the per-member arrays
  std::uint32_t members_off = 0; // first of shape.n world ranks in ReplayPlan::comm_world
  bool usable = false;
  bool bad = false;              // inconsistent or missing definition
};

struct PlanRank {
  const Event* ev = nullptr;
  std::uint32_t n = 0;                 // records
  BigVector<std::uint32_t> link;       // per record: message index, or instance index for collectives
  BigVector<std::uint32_t> order;      // replay order of the records when several threads recorded; else empty
  std::vector<std::uint32_t> crank_of; // local communicator id -> this rank's rank in it (kNone)
  std::uint32_t start_pos = 0;         // first position after MPI_Init
  std::uint64_t start_ticks = 0;       // MPI_Init exit
  double start_s = 0;                  // the same on the common timeline
  double spt = 1e-9;                   // seconds per tick
  double actual_end_s = 0;             // MPI_Finalize entry (or last record) on the common timeline
  std::uint32_t max_comm = 0;          // largest communicator of its collectives
  bool present = false;
};

struct ReplayPlan {
  std::vector<PlanRank> ranks;
  BigVector<PlanMsg> msgs;
  BigVector<std::uint8_t> msg_mode;      // SendMode per message
  const Message* messages = nullptr;     // Matching::messages
  std::vector<PlanInstance> instances;
  std::vector<std::int32_t> comm_world;  // member lists (world ranks by communicator rank)
  std::uint64_t members_total = 0;       // sum of shape.n over usable instances
  double zero_s = 0;                     // earliest MPI_Init exit
  std::uint64_t unusable_collectives = 0;  // member records of instances kept at recorded times
  bool multithreaded = false;
};

ReplayPlan make_plan(const ReplayInput& in);

// After a replay (model/replay/replay_notes.cpp): one line per collective algorithm used, with each
// member's wait in its instance (arrival, end and event per instance member), into `out`.
void describe_collectives(const ReplayPlan& plan, const std::vector<double>& arrival,
                          const std::vector<double>& end, const std::vector<std::uint32_t>& event,
                          ReplayResult& out);
// One note per machine term (cold start, fresh buffers) that applied.
void note_machine_terms(const ColdStart& cold, ReplayResult& out);

}  // namespace mstep::model::detail
