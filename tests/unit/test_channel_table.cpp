// The streaming pass's channel table (model/trace/channel_table.hpp): channels by key, kept in
// place while others are made, idle ones swept and their places reused, the rest in key order.
#include <catch2/catch.hpp>

#include <vector>

#include "model/trace/channel_table.hpp"

using mstep::ChannelKey;
using mstep::ChannelTable;

namespace {
struct TestChannel {
  std::vector<int> items;
  bool idle() const { return items.empty(); }
};
ChannelKey key(int src, int dst, int tag = 0, std::uint32_t comm = 0) { return {comm, src, dst, tag}; }
}  // namespace

TEST_CASE("ChannelTable: one channel a key, made at first sight, staying put while others are made") {
  ChannelTable<TestChannel> table;
  TestChannel& first = table[key(0, 1)];
  first.items.push_back(7);
  CHECK(&table[key(0, 1)] == &first);
  CHECK(&table[key(1, 0)] != &first);
  CHECK(&table[key(0, 1, 5)] != &first);
  CHECK(&table[key(0, 1, 0, 2)] != &first);
  // Busy channels are never swept: 3000 of them made after the first leave it where it was.
  for (int r = 0; r < 3000; ++r) table[key(r, r + 1, 1)].items.push_back(r);
  CHECK(&table[key(0, 1)] == &first);
  CHECK(first.items == std::vector<int>{7});
  CHECK(table.size() == 3004);
}

TEST_CASE("ChannelTable: idle channels are swept once 4096 are kept, and their places reused") {
  ChannelTable<TestChannel> table;
  TestChannel& busy = table[key(0, 1)];
  busy.items.push_back(1);
  for (int r = 1; r < 4096; ++r) table[key(r, 0)];  // idle
  CHECK(table.size() == 4096);
  CHECK(table.places() == 4096);
  // A new key: the 4095 idle channels go, the busy one stays, the new one takes a freed place.
  TestChannel& fresh = table[key(9999, 0)];
  CHECK(table.size() == 2);
  CHECK(table.places() == 4096);
  CHECK(fresh.idle());
  CHECK(&table[key(0, 1)] == &busy);
  CHECK(busy.items == std::vector<int>{1});
  // A swept key comes back as a new, empty channel.
  CHECK(table[key(5, 0)].idle());
  CHECK(table.size() == 3);
}

TEST_CASE("ChannelTable: for_each_in_order visits by source, destination, communicator, tag") {
  ChannelTable<TestChannel> table;
  const std::vector<ChannelKey> keys{key(2, 0), key(0, 3, 1), key(0, 3, 0, 1), key(0, 3, 0), key(1, 9), key(0, 2, 7)};
  for (std::size_t i = 0; i < keys.size(); ++i) table[keys[i]].items.push_back(static_cast<int>(i));
  std::vector<int> order;
  table.for_each_in_order([&](const ChannelKey&, const TestChannel& ch) { order.push_back(ch.items.at(0)); });
  // (0,2,c0,t7) (0,3,c0,t0) (0,3,c0,t1) (0,3,c1,t0) (1,9) (2,0)
  CHECK(order == std::vector<int>{5, 3, 1, 2, 4, 0});
}
