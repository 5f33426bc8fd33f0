// The request/communicator handle map: inserts, finds and erases agree with std::map under a
// random workload like a long run's Isend/Wait churn (handles reused, table grown).
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include "format/flat_map.hpp"

TEST_CASE("FlatHandleMap agrees with std::map under random churn", "[flat-map]") {
  mstep::FlatHandleMap<int> m(16);
  std::map<int, int> ref;
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const int key = static_cast<int>(0x2c000000u + rng() % 3000);  // MPICH-like request handles
    switch (rng() % 3) {
      case 0:
        m.insert(key, i);
        ref[key] = i;
        break;
      case 1:
        CHECK(m.erase(key) == (ref.erase(key) == 1));
        break;
      default: {
        const int* v = m.find(key);
        const auto it = ref.find(key);
        REQUIRE((v != nullptr) == (it != ref.end()));
        if (v) CHECK(*v == it->second);
      }
    }
  }
  CHECK(m.size() == ref.size());
  for (const auto& [k, v] : ref) {
    const int* found = m.find(k);
    REQUIRE(found);
    CHECK(*found == v);
  }
}
