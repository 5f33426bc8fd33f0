#include "format/member_list.hpp"

#include <algorithm>
#include <mutex>
#include <numeric>

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
  size_ = static_cast<std::uint32_t>(ranks.size());  // ranks are int32: under 2^31 of them
  ranks_ = std::make_shared<const std::vector<std::int32_t>>(std::move(ranks));
}

MemberList MemberList::identity(std::size_t n) {
  // One list for the life of the process, replaced by a longer one (twice as long at least) when
  // a larger size is asked for; lists handed out keep theirs.
  static std::mutex mutex;
  static std::shared_ptr<const std::vector<std::int32_t>> shared;
  MemberList m;
  m.identity_ = n > 0;
  m.size_ = static_cast<std::uint32_t>(n);  // a world's size at most (int32)
  if (n == 0) return m;
  // The list seen last, per thread: an analysis asks millions of times.
  thread_local std::shared_ptr<const std::vector<std::int32_t>> last;
  if (last && last->size() >= n) {
    m.ranks_ = last;
    return m;
  }
  const std::lock_guard lock(mutex);
  if (!shared || shared->size() < n) {
    std::vector<std::int32_t> v(std::max(n, shared ? 2 * shared->size() : n));
    std::iota(v.begin(), v.end(), 0);
    shared = std::make_shared<const std::vector<std::int32_t>>(std::move(v));
  }
  m.ranks_ = shared;
  last = shared;
  return m;
}

std::int64_t MemberList::rank_of(std::int32_t rank) const {
  if (identity_) return rank >= 0 && static_cast<std::size_t>(rank) < size() ? rank : -1;
  const auto it = std::find(begin(), end(), rank);
  return it == end() ? -1 : it - begin();
}

bool operator==(const MemberList& a, const MemberList& b) {
  return a.size_ == b.size_ && (a.ranks_ == b.ranks_ || std::equal(a.begin(), a.end(), b.begin(), b.end()));
}

}  // namespace mstep
