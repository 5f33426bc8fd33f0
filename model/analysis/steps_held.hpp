// Internal to the streamed M-steps (model/analysis/steps_stream.cpp): what is held of each rank's
// steps until they are predicted and nothing can name them any more.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "format/step_tracker.hpp"
#include "format/trace_format.hpp"
#include "model/analysis/small_list.hpp"
#include "model/replay/replay.hpp"
#include "model/trace/rank_comms.hpp"
#include "model/trace/stream_pass.hpp"

namespace mstep::model::steps_held {

// A partner as the receiving step holds it until predicted: the sender's step and the ticks of
// its computation before the message left (clamped to the step's when used, as align_steps does).
struct PendingPartner {
  std::uint32_t rank = 0, step = 0;
  std::uint64_t before = 0;
};

struct Entry {
  std::uint64_t compute = 0, mpi = 0, bytes_in = 0, bytes_out = 0;
  std::uint64_t begin_compute = 0;  // the rank's computation before this step
  double end_s = 0;                 // actual end, after zero
  double extra = 0;                 // machine terms
  double phi = 0;
  SmallList<PendingPartner, 1> incoming;
  SmallList<std::uint32_t, 2> groups;
  SmallList<std::int32_t, 2> gamma;  // the tracker's partner list (for the step table)
  // The communicator of the collective that closed the step, if the rank heard all its members:
  // they are the step's partners too (merged into gamma for a row, or named: StepRow::partners_all_of).
  const CommDef* heard_whole = nullptr;
  std::uint32_t open_receives = 0;  // receives and collectives whose partners are not known yet
  std::uint32_t open_sends = 0;     // messages and collectives that may still name this step
  std::uint32_t refs = 0;           // steps and groups not yet predicted that named this step
  bool closed = false, evaluated = false;

  // Back to a new step's state in place: a slot is reused for step after step, and its lists
  // keep their memory (a step a record: assigning a new Entry cost a fifth of the stream).
  void reset() {
    closed = evaluated = false;
    compute = mpi = bytes_in = bytes_out = begin_compute = 0;
    end_s = extra = phi = 0;
    incoming.clear();
    groups.clear();
    forget_partners();
    open_receives = open_sends = refs = 0;
  }
  // The partner list kept for the step table, once its row is made (or not kept).
  void forget_partners() {
    gamma.clear();
    heard_whole = nullptr;
  }
  // What a step's lists hold beyond a few entries goes when the step is dropped (a gather's root
  // hears every rank once; its slot need not keep that).
  void shrink() {
    shrink_lists();
    gamma.shrink(kKeep);
  }
  void shrink_lists() {
    incoming.shrink(kKeep);
    groups.shrink(kKeep);
  }
  static constexpr std::size_t kKeep = 16;
};

// Every rank's held steps in one pool of slots, in chunks that never move (so a reference to a
// step stays valid): the slots in use are the steps held, about three a rank at once on a run of
// many ranks. A ring of steps per rank, grown by doubling, held half as many again in slots that
// were never used (54 of a 65 536-rank report's 285 MB).
class EntryPool {
 public:
  Entry* take() {
    if (!free_.empty()) {
      Entry* slot = free_.back();
      free_.pop_back();
      return slot;
    }
    if (used_ == kChunk || chunks_.empty()) {
      chunks_.push_back(std::make_unique<Entry[]>(kChunk));
      used_ = 0;
    }
    return &chunks_.back()[used_++];
  }
  void give_back(Entry* slot) { free_.push_back(slot); }

 private:
  static constexpr std::size_t kChunk = 1024;
  std::vector<std::unique_ptr<Entry[]>> chunks_;
  std::vector<Entry*> free_;
  std::size_t used_ = 0;  // of the last chunk
};

// A rank's held steps, oldest first, as slots of the pool: a ring that grows by doubling.
class StepRing {
 public:
  std::size_t size() const { return n_; }
  Entry& operator[](std::size_t i) const { return *slots_[(head_ + i) & mask_]; }
  void push_back(Entry* slot) {
    if (n_ == capacity()) [[unlikely]] grow();
    slots_[(head_ + n_) & mask_] = slot;
    ++n_;
  }
  Entry* pop_front() {
    Entry* slot = slots_[head_];
    head_ = (head_ + 1) & mask_;
    --n_;
    return slot;
  }

 private:
  std::size_t capacity() const { return slots_ ? mask_ + 1 : 0; }
  void grow() {
    const std::size_t bigger = std::max<std::size_t>(4, 2 * capacity());
    auto moved = std::make_unique<Entry*[]>(bigger);
    for (std::size_t i = 0; i < n_; ++i) moved[i] = slots_[(head_ + i) & mask_];
    slots_ = std::move(moved);
    mask_ = static_cast<std::uint32_t>(bigger - 1);
    head_ = 0;
  }
  std::unique_ptr<Entry*[]> slots_;
  std::uint32_t head_ = 0, n_ = 0, mask_ = 0;  // mask_: the capacity (a power of two) - 1
};

struct Group {
  std::vector<PendingPartner> members;
  std::uint32_t refs = 0;  // member steps not yet predicted
  bool evaluated = false;
  double ready = 0, H = 0, comm = 0;
};

struct RankStepState {
  bool present = false;
  std::optional<StepTracker> tracker;
  RankComms comms;
  StepRing entries;  // steps base.. (held ones), as slots of the pool
  std::uint32_t base = 0;
  std::uint32_t closed = 0, evaluated = 0;
  std::uint64_t closed_compute = 0;  // sum of the closed steps' computation
  std::uint64_t total_compute = 0, last_exit = 0;
  bool started = false;
  std::uint64_t last_t_exit = 0;
  std::vector<std::int32_t> waiters;  // ranks waiting for this one's progress
  bool queued = false;
  // Machine charges of this rank, by record.
  std::vector<MachineCharge> charges;
  std::size_t next_charge = 0;
};

// The tag a record carries through the pass (RecordTag): its step, its kind and the ticks of its
// step's computation before it (its send point).
enum class Kind : std::uint64_t { None = 0, Send = 1, Receive = 2, Collective = 3 };
inline RecordTag make_tag(Kind k, std::uint32_t step, std::uint64_t before) {
  return {static_cast<std::uint64_t>(step) | static_cast<std::uint64_t>(k) << 32, before};
}
inline Kind kind_of(RecordTag t) { return static_cast<Kind>(t.a >> 32); }
inline std::uint32_t step_of(RecordTag t) { return static_cast<std::uint32_t>(t.a); }

}  // namespace mstep::model::steps_held
