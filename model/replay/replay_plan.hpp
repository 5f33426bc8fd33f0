// Internal to the replay (model/replay/replay.cpp): what the replay keeps while it runs. Nothing
// here grows with the trace: each rank's records are read a window at a time, and which record
// goes with which (a send with its receive, a Wait with its Isend, a collective record with its
// instance) is found as the records are read (Linker, model/replay/replay_link.cpp). A message
// or a collective instance lives from its first record read to its last record replayed, so the
// replay's state is the ranks, the records in their windows, and what is in flight.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>

#include <sys/mman.h>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

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
// Machine terms of a message (ColdStart).
inline constexpr std::uint8_t kCold = 1, kFresh = 2;

// One message from the first of its records read to the last of them replayed.
struct LiveMsg {
  double ts = kUnknown;            // predicted send start
  double tr = kUnknown;            // predicted receive post
  // Progress (a delivered rendezvous only): the receiver's first moment inside MPI from the post
  // on: tr for a blocking receive; for an Irecv the entry of the receiver's next call, kUnknown
  // until that call starts. MPICH answers a request-to-send only inside an MPI call.
  double tp = kUnknown;
  // Likewise the sender's (a pushing rendezvous only): ts for a blocking send, for an Isend the
  // entry of the sender's next call.
  double tq = kUnknown;
  std::uint64_t bytes = 0;         // as the receiver got it (the sender's count until then)
  std::int32_t src = -1, dst = -1; // -1: that side not read yet
  std::int32_t other = -1;         // the partner the side read first names
  std::uint32_t send_event = kNone, send_done = kNone;  // the send record, and the Wait of an Isend
  std::uint32_t post_event = kNone, recv_event = kNone; // receive posted, receive completed
  float sender_wait = 0, receiver_wait = 0;
  std::uint8_t mode = kBySize;
  std::uint8_t machine = 0;        // kCold | kFresh
  std::uint8_t refs = 0;           // its records not replayed yet
  bool matched() const { return src >= 0 && dst >= 0; }
};

// One message slot of a collective instance (model/replay/replay_collectives.hpp). Its machine
// terms are beside it (LiveInstance::machine): two flags made the slot 24 bytes instead of 16, and
// a world barrier of 65 536 ranks has a million slots.
struct Slot {
  double ts = kUnknown;
  double tr = kUnknown;
};

// A matched message's predicted waits, for ReplayResult's per-message arrays.
struct MessageWait {
  std::int32_t src = 0;
  std::uint32_t send_event = 0;
  float sender_wait_s = 0, receiver_wait_s = 0;
};

// One collective instance (the k-th collective on one communicator) while any member is in it.
struct LiveInstance {
  CollShape shape;
  std::uint32_t rounds = 0;       // slots = rounds * shape.n
  std::uint32_t registered = 0;   // member records read
  std::uint32_t finished = 0;     // members done in the replay
  std::uint32_t gcomm = 0;
  std::uint64_t key = 0;          // (gcomm << 32) | k
  const MemberList* members = nullptr;  // world ranks by communicator rank
  bool bad = false;               // inconsistent or missing definition, or a member without a trace
  double residual = 0;            // seconds each member pays beyond its program (ReplayInput::collective_times)
  // The same for a member that computed isolated_gap_s or more before its call (isolated), linear
  // in its computation between the two (CollectiveTimes::residual_after); gap 0: no isolated loop.
  double residual_isolated = 0, isolated_gap_s = 0;
  std::vector<Slot> slots;      // one per message of the algorithm, while members run it
  // Per slot, kCold (among the first messages of its pair) | kFresh (a size its receiver has not
  // received before): ColdStart's terms; empty where they are off.
  std::vector<std::uint8_t> machine;
  std::vector<double> arrival, end;
  std::vector<std::uint32_t> event;
  std::vector<std::uint32_t> waiting;  // ranks that entered it before every member's record was read
};

// Where a rank's records come from: all of them at once (a trace in memory), or a window at a
// time (read from a file, or cut into windows by ReplayInput::window for the tests).
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // Appends the next records to `out`; false when there are none left.
  virtual bool read(BigVector<Event>& out) = 0;
};

// A rank's records in the replay's hands: [base, base + size) of its sequence.
struct RankWindow {
  const Event* ev = nullptr;        // record base + i is ev[i]
  BigVector<Event> owned;           // a windowed source's records (ev points into it)
  BigVector<std::uint32_t> link;    // per record: message or instance id (kNone: none)
  std::vector<std::uint32_t> order; // whole traces of several threads: replay order; else empty
  std::uint32_t base = 0, size = 0;
  std::unique_ptr<RecordSource> source;  // records still to read from a source
  // A trace in memory read in windows without copying: ev points into it, up to view_total.
  const Event* view = nullptr;
  std::uint32_t view_total = 0, view_step = 0;
  std::uint32_t end() const { return base + size; }
  bool more() const { return source != nullptr || (view && end() < view_total); }
};

// What the replay knows of one rank before reading its records.
struct RankInfo {
  bool present = false;
  double spt = 1e-9;                       // seconds per tick
  std::vector<std::uint32_t> crank_of;     // local communicator id -> this rank's rank in it (kNone)
  std::vector<const CommDef*> def_of;      // local communicator id -> its definition (null)
};

// The run's static description: ranks and communicators (built by make_ranks, replay_setup.cpp).
struct RunInfo {
  std::vector<RankInfo> ranks;
  std::vector<std::vector<std::uint32_t>> comm_ids;  // global_comm_ids of the ranks
  std::uint32_t gcomm(std::size_t rank, std::uint16_t local) const { return global_comm(comm_ids, rank, local); }
  // Member lists of the global communicators collectives run on (world ranks by communicator rank).
  std::unordered_map<std::uint32_t, MemberList> members;
  bool multithreaded = false;
  CollectiveSubstitutes substitutes;  // ReplayInput's
  const CollectiveTable* collective_times = nullptr;  // ReplayInput's
};

RunInfo make_ranks(const ReplayInput& in);

// Which record goes with which, found as records are read (model/replay/replay_link.cpp).
// Matching is model/trace/matching.hpp's: per channel (communicator, source, destination, tag),
// the k-th send in the sender's order with the k-th completed receive in posting order. A
// receive is assigned when it is known to have completed, and in posting order: receives read
// after an Irecv whose completion has not been read yet wait behind it (linked_end).
class Linker {
 public:
  explicit Linker(RunInfo& run);
  ~Linker();
  // Links the records [from, w.end()) just read into rank r's window.
  void link(std::uint32_t r, RankWindow& w, std::uint32_t from);
  // Rank r's records are all read: Irecvs never completed have no message.
  void finish(std::uint32_t r, RankWindow& w);
  // Records of rank r before this have their final links.
  std::uint32_t linked_end(std::uint32_t r, const RankWindow& w) const;
  // Stops waiting for rank r's oldest Irecv not known to be complete: it has no message (the
  // replay calls this when the window has grown too far past it, see replay_engine_run.hpp).
  void give_up_oldest(std::uint32_t r, RankWindow& w);

  LiveMsg& msg(std::uint32_t id) { return msgs_[id]; }
  // One of the message's records is replayed; returns true when it was its last.
  bool release_ref(std::uint32_t id);
  void free_msg(std::uint32_t id);
  LiveInstance& instance(std::uint32_t id) { return *instances_[id]; }
  void free_instance(std::uint32_t id);
  // How many collectives on global communicator `gcomm` rank r has read.
  std::uint32_t collectives_read(std::uint32_t r, std::uint32_t gcomm) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  BigVector<LiveMsg> msgs_;
  std::vector<std::unique_ptr<LiveInstance>> instances_;
  friend struct Impl;
};

// One line per collective algorithm used ("MPI_Bcast: binomial tree (MPICH default for 4 ranks,
// 8 bytes; 12 calls)"), gathered as instances finish (model/replay/replay_notes.cpp).
class CollectiveUses {
 public:
  // A finished instance: its use, and each member's wait (into out.collective_waits).
  void add(const LiveInstance& inst, ReplayResult& out);
  void describe(ReplayResult& out) const;

 private:
  struct Use {
    std::uint64_t calls = 0, min_m = ~std::uint64_t{0}, max_m = 0;
    bool substitute = false;  // libmstep's algorithm (all calls of an op in a run are, or none)
  };
  std::vector<std::pair<std::uint64_t, Use>> uses_;  // key: op, algo, n packed
};

// One note per machine term (cold start, fresh buffers) that applied.
void note_machine_terms(const ColdStart& cold, ReplayResult& out);

}  // namespace mstep::model::detail
