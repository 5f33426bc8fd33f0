// The per-pair latency table of the delay apparatus (format/delay_pairs.hpp) and its bad input.
#include <catch2/catch.hpp>

#include "format/delay_pairs.hpp"

using mstep::PairLatency;

TEST_CASE("delay pairs: two clusters joined by a slow link", "[delay]") {
  std::string error;
  const PairLatency p =
      PairLatency::parse(R"({"clusters": [[0, 1], [2, 3]], "intra": "1us", "inter": "200us"})", 4, error);
  REQUIRE(error.empty());
  CHECK(p.ns(0, 1) == 1000);
  CHECK(p.ns(3, 2) == 1000);
  CHECK(p.ns(1, 2) == 200000);
  CHECK(p.ns(3, 0) == 200000);
  CHECK(p.ns(0, 7) == 0);  // outside the run: nothing added
  // meta.json's copy: the clusters as given, times in seconds.
  CHECK(p.json().starts_with(R"({"clusters":[[0,1],[2,3]],"inter":0.000199999)"));
  CHECK(p.json().ends_with(R"("intra":1e-06})"));
  // intra defaults to 0; numbers are seconds.
  const PairLatency q = PairLatency::parse(R"({"clusters": [[0], [1]], "inter": 5e-5})", 2, error);
  REQUIRE(error.empty());
  CHECK(q.ns(0, 0) == 0);
  CHECK(q.ns(0, 1) == 50000);
}

TEST_CASE("delay pairs: a full matrix, row = sender", "[delay]") {
  std::string error;
  const PairLatency p = PairLatency::parse(R"({"matrix": [[0, "50us"], ["80us", 0]]})", 2, error);
  REQUIRE(error.empty());
  CHECK(p.ns(0, 1) == 50000);
  CHECK(p.ns(1, 0) == 80000);
  CHECK(p.ns(1, 1) == 0);
}

TEST_CASE("delay pairs: bad tables say what is wrong in one line", "[delay]") {
  const auto error_of = [](const char* text, int ranks) {
    std::string error;
    const PairLatency p = PairLatency::parse(text, ranks, error);
    CHECK(p.empty());
    return error;
  };
  CHECK(error_of("{", 2) == "not JSON");
  CHECK(error_of(R"({"inter": "1us"})", 2) ==
        R"(expected an object with "clusters" (and "intra", "inter") or "matrix")");
  CHECK(error_of(R"({"clusters": [[0, 1]], "inter": "fast"})", 2) ==
        R"("inter" (and "intra", if given) must be times, e.g. "200us")");
  CHECK(error_of(R"({"clusters": [[0], [0, 1]], "inter": "1us"})", 2) == "cluster 1: 0 is not a rank of 0..1 in no other cluster");
  CHECK(error_of(R"({"clusters": [[0]], "inter": "1us"})", 2) == "rank 1 is in no cluster");
  CHECK(error_of(R"({"matrix": [[0, 1]]})", 2) == R"("matrix" must have 2 rows (one per rank))");
  CHECK(error_of(R"({"matrix": [[0, 1], [0]]})", 2) == R"("matrix" row 1 must have 2 entries)");
  CHECK(error_of(R"({"matrix": [[0, -1], [0, 0]]})", 2) == R"("matrix" row 0 entry 1: -1 is not a time)");
}
