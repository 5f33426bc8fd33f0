// The world ranks of a communicator's members, in communicator rank order. Immutable and shared:
// a copy costs nothing, and the list 0..n-1 (MPI_COMM_WORLD and its duplicates, which every rank's
// trace defines) exists once per process whoever decodes it, so that a run's definitions take
// memory in ranks, not in ranks squared.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

namespace mstep {

class MemberList {
 public:
  MemberList() = default;
  MemberList(std::vector<std::int32_t> ranks);  // NOLINT: implicit, a list of ranks is one
  MemberList(std::initializer_list<std::int32_t> ranks) : MemberList(std::vector<std::int32_t>(ranks)) {}
  // 0, 1, ..., n-1: the first n entries of the one shared list 0..N-1 of the largest N asked for
  // (its memory is the largest identity list's, not the sum over every size asked for: a damaged
  // trace defining communicators of a thousand distinct sizes made the reader hold gigabytes).
  static MemberList identity(std::size_t n);

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::int32_t* data() const { return ranks_ ? ranks_->data() : nullptr; }
  const std::int32_t* begin() const { return data(); }
  const std::int32_t* end() const { return data() + size_; }
  std::int32_t operator[](std::size_t i) const { return (*ranks_)[i]; }
  // A copy: for the few places that need a vector of their own.
  std::vector<std::int32_t> vector() const { return {begin(), end()}; }
  operator std::span<const std::int32_t>() const { return {data(), size_}; }  // NOLINT
  // The list is 0..size()-1 (written as its size alone, share/trace-format.md).
  bool is_identity() const { return identity_; }
  // Communicator rank of world rank `rank`, or -1.
  std::int64_t rank_of(std::int32_t rank) const;

  friend bool operator==(const MemberList& a, const MemberList& b);

 private:
  std::shared_ptr<const std::vector<std::int32_t>> ranks_;  // size_ of them are the list's
  std::uint32_t size_ = 0;  // 24 bytes in all: one is held in every M-step a report has in flight
  bool identity_ = false;
};

}  // namespace mstep
