// Internal to the streamed M-steps (model/analysis/steps_stream.cpp): what is held of each rank's
// steps until they are predicted and nothing can name them any more.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "format/member_list.hpp"
#include "format/step_tracker.hpp"
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
  std::vector<PendingPartner> incoming;
  std::vector<std::uint32_t> groups;
  std::vector<std::int32_t> gamma;  // the tracker's partner list (for the step table)
  MemberList gamma_members;         // and the members of the collective that closed the step, if it heard them all
  std::uint32_t open_receives = 0;  // receives and collectives whose partners are not known yet
  std::uint32_t open_sends = 0;     // messages and collectives that may still name this step
  std::uint32_t refs = 0;           // steps and groups not yet predicted that named this step
  bool closed = false, evaluated = false;
  bool gamma_named = false;         // gamma_members are named as a communicator, not listed (StepRow::partners_all_of)

  // Back to a new step's state in place: a ring slot is reused for step after step, and its
  // lists keep their memory (a step a record: assigning a new Entry cost a fifth of the stream).
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
    gamma_members = {};
    gamma_named = false;
  }
  // What a step's lists hold beyond a few entries goes when the step is dropped (a gather's root
  // hears every rank once; its slot need not keep that).
  void shrink() {
    shrink_lists();
    if (gamma.capacity() > kKeep) std::vector<std::int32_t>().swap(gamma);
    gamma_members = {};
  }
  void shrink_lists() {
    if (incoming.capacity() > kKeep) std::vector<PendingPartner>().swap(incoming);
    if (groups.capacity() > kKeep) std::vector<std::uint32_t>().swap(groups);
  }
  static constexpr std::size_t kKeep = 16;
};

// A rank's held steps: a ring that grows by doubling (a deque of these large entries would
// allocate every few steps). References stay valid until the next push_back.
class StepRing {
 public:
  std::size_t size() const { return n_; }
  Entry& operator[](std::size_t i) { return buf_[(head_ + i) & mask_]; }
  const Entry& operator[](std::size_t i) const { return buf_[(head_ + i) & mask_]; }
  void push_back() {
    if (n_ == buf_.size()) {
      std::vector<Entry> bigger(std::max<std::size_t>(2, 2 * buf_.size()));
      for (std::size_t i = 0; i < n_; ++i) bigger[i] = std::move((*this)[i]);
      buf_ = std::move(bigger);
      head_ = 0;
      mask_ = buf_.size() - 1;
    }
    (*this)[n_].reset();
    ++n_;
  }
  void pop_front() {
    (*this)[0].shrink();
    head_ = (head_ + 1) & mask_;
    --n_;
  }

 private:
  std::vector<Entry> buf_;
  std::size_t head_ = 0, n_ = 0, mask_ = 0;  // mask_: capacity - 1 (a power of two)
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
  StepRing entries;  // steps base.. (held ones)
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
