#include "format/member_list.hpp"

#include <algorithm>
#include <mutex>
#include <numeric>
#include <unordered_map>

namespace mstep {
namespace {

bool counts_up(const std::vector<std::int32_t>& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] != static_cast<std::int32_t>(i)) return false;
  return true;
}

}  // namespace

MemberList::MemberList(std::vector<std::int32_t> ranks) {
  if (!ranks.empty() && counts_up(ranks)) {
    *this = identity(ranks.size());
    return;
  }
  ranks_ = std::make_shared<const std::vector<std::int32_t>>(std::move(ranks));
}

MemberList MemberList::identity(std::size_t n) {
  // Kept for the life of the process: a run has a handful of sizes (the world, its halves, ...).
  static std::mutex mutex;
  static std::unordered_map<std::size_t, std::shared_ptr<const std::vector<std::int32_t>>> shared;
  MemberList m;
  m.identity_ = n > 0;
  if (n == 0) return m;
  // The size asked for last, per thread: an analysis asks for the same few sizes millions of times.
  thread_local std::shared_ptr<const std::vector<std::int32_t>> last;
  if (last && last->size() == n) {
    m.ranks_ = last;
    return m;
  }
  const std::lock_guard lock(mutex);
  auto& p = shared[n];
  if (!p) {
    std::vector<std::int32_t> v(n);
    std::iota(v.begin(), v.end(), 0);
    p = std::make_shared<const std::vector<std::int32_t>>(std::move(v));
  }
  m.ranks_ = p;
  last = p;
  return m;
}

const std::vector<std::int32_t>& MemberList::vector() const {
  static const std::vector<std::int32_t> none;
  return ranks_ ? *ranks_ : none;
}

std::int64_t MemberList::rank_of(std::int32_t rank) const {
  if (identity_) return rank >= 0 && static_cast<std::size_t>(rank) < size() ? rank : -1;
  const auto it = std::find(begin(), end(), rank);
  return it == end() ? -1 : it - begin();
}

bool operator==(const MemberList& a, const MemberList& b) {
  return a.ranks_ == b.ranks_ || std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace mstep
