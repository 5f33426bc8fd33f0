#include "format/step_tracker.hpp"

#include <algorithm>

namespace mstep {

StepTracker::StepTracker(std::int32_t self_world_rank, std::int32_t world_size, std::uint64_t start_ticks)
    : self_(self_world_rank),
      last_exit_(start_ticks),
      member_bits_((static_cast<std::size_t>(std::max(world_size, 1)) + 63) / 64, 0) {
  open_.index = 1;
  open_.begin = start_ticks;
  add_partner(self_);
}

void StepTracker::add_partner(std::int32_t rank) {
  if (rank < 0) return;
  const auto w = static_cast<std::size_t>(rank) / 64;
  if (w >= member_bits_.size()) member_bits_.resize(w + 1, 0);
  const std::uint64_t bit = std::uint64_t{1} << (rank % 64);
  if (member_bits_[w] & bit) return;
  member_bits_[w] |= bit;
  open_.partners.push_back(rank);
}

void StepTracker::close(std::uint64_t t, Accum carry) {
  StepRecord done = open_;
  done.end = t;
  done.compute -= carry.compute;
  done.mpi -= carry.mpi;
  std::sort(done.partners.begin(), done.partners.end());
  closed_.push_back(std::move(done));
  for (auto p : open_.partners) member_bits_[static_cast<std::size_t>(p) / 64] = 0;
  const std::uint32_t next = open_.index + 1;
  open_ = StepRecord{};
  open_.index = next;
  open_.begin = t;
  open_.compute = carry.compute;
  open_.mpi = carry.mpi;
  active_ = carry.compute + carry.mpi > 0;
  has_recv_ = false;
  since_recv_ = carry;
  add_partner(self_);
}

void StepTracker::send_side(std::uint64_t t, std::uint64_t bytes) {
  // A send after a receive of this step: the step ended with that receive (MODELS.md 1).
  if (has_recv_) close(last_recv_t_, since_recv_);
  active_ = true;
  open_.bytes_out += bytes;
  ++open_.msgs_out;
  (void)t;
}

void StepTracker::receive(std::int32_t from, std::uint64_t bytes, std::uint64_t t) {
  add_partner(from);
  open_.bytes_in += bytes;
  if (from != self_) ++open_.msgs_in;
  has_recv_ = true;
  active_ = true;
  last_recv_t_ = t;
  since_recv_ = Accum{};
}

void StepTracker::feed(const Event& e, std::span<const std::int32_t> members) {
  const Role role = op_role(e.op);
  if (!e.continuation()) {
    const std::uint64_t gap = e.t_enter > last_exit_ ? e.t_enter - last_exit_ : 0;
    const std::uint64_t dur = e.t_exit > e.t_enter ? e.t_exit - e.t_enter : 0;
    last_exit_ = std::max(last_exit_, e.t_exit);
    // The tool's own flush is neither computation nor MPI: its gap before still counts.
    open_.compute += gap;
    since_recv_.compute += gap;
    if (role != Role::Tool) {
      open_.mpi += dur;
      since_recv_.mpi += dur;
    }
    active_ = true;
  }
  if (e.flags & kIncomplete) return;
  const bool root = e.flags & kRoot;
  switch (role) {
    case Role::Send:
    case Role::Isend:
      if (e.peer >= 0) send_side(e.t_enter, e.send_bytes);
      return;
    case Role::Recv:
      if (e.peer >= 0) receive(e.peer, e.recv_bytes, e.t_exit);
      return;
    case Role::Complete:
      if ((e.flags & kRecvHalf) && e.peer >= 0) receive(e.peer, e.recv_bytes, e.t_exit);
      return;
    case Role::SendRecv:
      if (e.peer < 0) return;
      if (e.flags & kRecvHalf) receive(e.peer, e.recv_bytes, e.t_exit);
      else send_side(e.t_enter, e.send_bytes);
      return;
    case Role::CollRootOut:
    case Role::CollRootIn:
    case Role::CollAll: {
      const bool sends = role == Role::CollAll || (role == Role::CollRootOut ? root : !root);
      const bool receives = role == Role::CollAll || (role == Role::CollRootOut ? !root : root);
      if (sends) {
        send_side(e.t_enter, 0);
        open_.bytes_out += e.send_bytes;
      }
      if (receives) {
        if (role == Role::CollRootOut) {
          receive(e.peer, 0, e.t_exit);
        } else {
          for (auto m : members) receive(m, 0, e.t_exit);
        }
        open_.bytes_in += e.recv_bytes;
      }
      // A collective always ends its step; its own MPI time belongs to the step it ends.
      close(e.t_exit, Accum{});
      return;
    }
    default: return;
  }
}

void StepTracker::finish(std::uint64_t end_ticks) {
  if (!active_) return;
  close(std::max(end_ticks, open_.begin), Accum{});
  active_ = false;
}

}  // namespace mstep
