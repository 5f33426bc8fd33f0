#include "format/step_tracker.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>

namespace mstep {

StepTracker::StepTracker(std::int32_t self_world_rank, std::int32_t world_size,
                         std::uint64_t start_ticks, std::size_t reserve_partners)
    : self_(self_world_rank),
      begin_(start_ticks),
      last_exit_(start_ticks) {
  // A step with more partners than reserved grows the vector once, and its capacity is kept.
  partners_.reserve(std::clamp<std::size_t>(reserve_partners, 1, static_cast<std::size_t>(std::max(world_size, 1))));
  add_partner(self_);
}

// The list's next entry would be one past kListedPartners, or the step already keeps bits.
void StepTracker::add_partner_slow(std::int32_t rank) {
  if (!use_bits_) {
    partners_.push_back(rank);
    use_bits_ = true;
    for (const std::int32_t p : partners_) set_bit(p);
    return;
  }
  if (set_bit(rank)) partners_.push_back(rank);
}

bool StepTracker::set_bit(std::int32_t rank) {
  const auto word = static_cast<std::size_t>(rank) / 64;
  // Sized by the highest partner so far, not by the world.
  if (word >= partner_bits_.size()) [[unlikely]] partner_bits_.resize(word + 1, 0);
  const std::uint64_t bit = std::uint64_t{1} << (static_cast<unsigned>(rank) % 64);
  if (partner_bits_[word] & bit) return false;
  partner_bits_[word] |= bit;
  return true;
}

void StepTracker::trim(std::size_t keep) {
  for (StepRecord& r : closed_)
    if (r.partners.capacity() > keep) std::vector<std::int32_t>().swap(r.partners);
  if (partners_.capacity() > keep) std::vector<std::int32_t>(partners_.begin(), partners_.end()).swap(partners_);
  // Outside a step of many partners the bits are all zero: they can go.
  if (!use_bits_ && partner_bits_.size() > keep / 64 + 1) std::vector<std::uint64_t>().swap(partner_bits_);
}

void StepTracker::close(std::uint64_t t, Usage carry) {
  if (n_closed_ == closed_.size()) closed_.emplace_back();
  StepRecord& r = closed_[n_closed_++];
  r.index = index_;
  r.begin = begin_;
  r.end = std::max(t, begin_);
  r.compute = step_.compute - carry.compute;
  r.mpi = step_.mpi - carry.mpi;
  r.bytes_in = bytes_in_;
  r.bytes_out = bytes_out_;
  r.msgs_in = msgs_in_;
  r.msgs_out = msgs_out_;
  r.whole_comm = whole_comm_;
  whole_comm_ = kNoWholeComm;
  // Gamma in rank order. A collective of the whole world makes it every member: then the bits,
  // read word by word, give the order in O(n / 64 + n) where sorting took O(n log n) (at 16 384
  // ranks it was most of a barrier step's cost); a few partners are sorted as they are.
  const std::size_t words = partner_bits_.size();
  if (use_bits_ && partners_.size() >= 64 && words <= 4 * partners_.size()) {
    r.partners.clear();
    for (std::size_t w = 0; w < words; ++w)
      for (std::uint64_t b = partner_bits_[w]; b != 0; b &= b - 1)
        r.partners.push_back(static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(b))));
  } else {
    // Mostly self and one or two partners: an insertion sort, where std::sort's set-up was a third
    // of a ping-pong step's cost on the recorder's flush path.
    if (partners_.size() <= 16) {
      for (std::size_t i = 1; i < partners_.size(); ++i) {
        const std::int32_t v = partners_[i];
        std::size_t j = i;
        for (; j > 0 && partners_[j - 1] > v; --j) partners_[j] = partners_[j - 1];
        partners_[j] = v;
      }
    } else {
      std::sort(partners_.begin(), partners_.end());
    }
    // Into the slot's vector, whose capacity is reused; self and a partner or two copied by hand,
    // where assign's call of memmove cost more than the copy.
    const std::size_t n = partners_.size();
    if (r.partners.size() != n) r.partners.resize(n);
    if (n <= 2) {
      if (n > 0) r.partners[0] = partners_[0];
      if (n > 1) r.partners[1] = partners_[1];
    } else {
      std::copy(partners_.begin(), partners_.end(), r.partners.begin());
    }
  }

  // Only the words of set members are non-zero: clearing those is O(|Gamma|), not O(world).
  if (use_bits_)
    for (const std::int32_t p : partners_) partner_bits_[static_cast<std::size_t>(p) / 64] = 0;
  use_bits_ = false;
  partners_.clear();

  ++index_;
  begin_ = r.end;
  step_ = carry;
  pending_ = carry;
  bytes_in_ = bytes_out_ = 0;
  msgs_in_ = msgs_out_ = 0;
  has_recv_ = false;
  if (self_ >= 0) partners_.push_back(self_);  // add_partner(self_) on an empty list
}

void StepTracker::collective(const Event& e, Role role, std::span<const std::int32_t> members, bool inter) {
  const bool root = e.flags & kRoot;
  // A non-root whose root is kNoPeer is MPI_PROC_NULL in an intercommunicator's root group: it
  // takes no part in the transfer.
  const bool rooted_away = role != Role::CollAll && !root && e.peer < 0;
  const bool sends = !rooted_away && (role == Role::CollAll || (role == Role::CollRootOut) == root);
  const bool receives =
      !rooted_away && (role == Role::CollAll || (role == Role::CollRootOut) != root);

  if (sends) send_side(e.send_bytes);
  if (receives) {
    if (role == Role::CollRootOut) {
      receive(e.peer, e.recv_bytes, e.t_exit);
    } else {
      // One message in per member other than self (see the header); bytes once for the call.
      bytes_in_ += e.recv_bytes;
      if (members.size() >= kListedMembers && e.comm != kSharedCommId) {
        // Named, not listed: an intracommunicator has the rank among its members.
        whole_comm_ = e.comm;
        msgs_in_ += static_cast<std::uint32_t>(members.size() - (inter ? 0 : 1));
      } else {
        for (const std::int32_t m : members) {
          if (m < 0 || m == self_) continue;
          add_partner(m);
          ++msgs_in_;
        }
      }
      has_recv_ = true;
      last_recv_t_ = std::max(e.t_exit, begin_);
      pending_ = Usage{};
    }
  }
  // A collective always ends the step it is in, its own MPI time included.
  close(e.t_exit, Usage{});
}

void StepTracker::finish(std::uint64_t end_ticks) {
  if (end_ticks > last_exit_) {
    const Usage tail{end_ticks - last_exit_, 0, 0};
    step_.add(tail);
    pending_.add(tail);
    last_exit_ = end_ticks;
  }
  // The end of the program ends the receive phase as a send would: the work after the last
  // receive is the last step's computation (the paper's final compute-only step), not part of
  // the communication step before it.
  if (has_recv_ && (pending_.calls > 0 || pending_.compute > 0)) close(last_recv_t_, pending_);
  if (!empty()) close(end_ticks, Usage{});
}

}  // namespace mstep
