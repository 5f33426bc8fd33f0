// SmallList (model/analysis/small_list.hpp): a step's partner lists, in place up to N.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "model/analysis/small_list.hpp"

using mstep::model::SmallList;

namespace {
struct Partner {
  std::uint32_t rank = 0, step = 0;
  std::uint64_t before = 0;
};
template <class L>
std::vector<std::uint32_t> ranks_of(const L& l) {
  std::vector<std::uint32_t> out;
  for (const auto& p : l) out.push_back(p.rank);
  return out;
}
}  // namespace

TEST_CASE("SmallList: in place up to N, then on the heap, in order", "[small_list]") {
  SmallList<Partner, 1> l;
  CHECK(l.empty());
  CHECK(l.capacity() == 1);
  l.push_back({7, 1, 10});
  CHECK(l.capacity() == 1);  // still in place
  for (std::uint32_t r = 8; r < 40; ++r) l.push_back({r, 2, 20});
  CHECK(l.size() == 33);
  CHECK(l.capacity() >= 33);
  const auto ranks = ranks_of(l);
  REQUIRE(ranks.size() == 33);
  for (std::size_t i = 0; i < ranks.size(); ++i) CHECK(ranks[i] == 7 + i);
  CHECK(l.back().rank == 39);
  CHECK(l.back().before == 20);
}

TEST_CASE("SmallList: clear keeps the heap, shrink gives back more than it keeps", "[small_list]") {
  SmallList<std::int32_t, 2> l;
  for (int i = 0; i < 20; ++i) l.push_back(i);
  const auto cap = l.capacity();
  l.clear();
  CHECK(l.empty());
  CHECK(l.capacity() == cap);
  l.push_back(5);
  l.shrink(64);  // 32 slots are kept
  CHECK(l.capacity() == cap);
  CHECK(l.size() == 1);
  l.shrink(16);
  CHECK(l.capacity() == 2);
  CHECK(l.empty());
  l.push_back(3);
  l.push_back(4);
  CHECK(l.capacity() == 2);
  CHECK(*l.begin() == 3);
}

TEST_CASE("SmallList: assign and move, in place and from the heap", "[small_list]") {
  const std::vector<std::int32_t> five{1, 2, 3, 4, 5};
  SmallList<std::int32_t, 2> a;
  a.assign(five.begin(), five.begin() + 2);
  CHECK(std::vector<std::int32_t>(a.begin(), a.end()) == std::vector<std::int32_t>{1, 2});
  CHECK(a.capacity() == 2);
  a.assign(five.begin(), five.end());
  CHECK(std::vector<std::int32_t>(a.begin(), a.end()) == five);
  SmallList<std::int32_t, 2> b(std::move(a));
  CHECK(std::vector<std::int32_t>(b.begin(), b.end()) == five);
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty and usable
  a.push_back(9);
  CHECK(*a.begin() == 9);
  SmallList<std::int32_t, 2> c;
  c.push_back(42);
  b = std::move(c);  // b's heap goes, c's in-place value comes
  CHECK(std::vector<std::int32_t>(b.begin(), b.end()) == std::vector<std::int32_t>{42});
  CHECK(b.capacity() == 2);
}

TEST_CASE("SmallList: insert keeps a sorted list sorted, in place and on the heap", "[small_list]") {
  SmallList<std::int32_t, 1> l;
  for (const std::int32_t v : {50, 10, 40, 20, 30, 60, 0}) {
    const std::int32_t* at = std::lower_bound(l.begin(), l.end(), v);
    CHECK(*l.insert(at, v) == v);
  }
  CHECK(std::vector<std::int32_t>(l.begin(), l.end()) == std::vector<std::int32_t>{0, 10, 20, 30, 40, 50, 60});
}
