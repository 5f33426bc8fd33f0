// The common timeline when a rank lost its clock samples (killed before writing them).
#include <catch2/catch.hpp>

#include "model/trace/timeline.hpp"
#include "trace_builders.hpp"

using namespace mstep;
using namespace mstep::test;

TEST_CASE("a rank without clock samples is placed by the others and flagged", "[timeline]") {
  // Rank 0 has its Init sample: tick 0 is local CLOCK_MONOTONIC 7000 s (a machine up for two
  // hours), offset 0. Rank 1 was killed before any sample reached its file.
  const double uptime_ns = 7000e9;
  RankTrace a = rank(0, 2, {ev(Op::Init, -1, 0, 1000), ev(Op::Barrier, -1, 2'000'000, 2'500'000)});
  a.clocks = {{ClockSync::AtInit, 0, static_cast<std::int64_t>(uptime_ns), 0, 0}};
  RankTrace b = rank(1, 2, {ev(Op::Init, -1, 50, 1200), ev(Op::Barrier, -1, 2'000'200, 2'500'200)});
  const Timeline tl({&a, &b});
  REQUIRE(tl.unplaced() == std::vector<int>{1});
  // Rank 1's Init exit lies on rank 0's; its Init entry, 1150 ns before, is the earliest event
  // of the run (zero).
  CHECK(tl.seconds(1, 50) == Approx(0.0));
  CHECK(tl.seconds(1, 1200) == Approx(1150e-9));
  CHECK(tl.seconds(0, 1000) == Approx(1150e-9));
  // Its Barrier exit 2'499'000 ns after its Init exit, as rank 0's: not 7000 s away.
  CHECK(tl.seconds(1, 2'500'200) == Approx(2'500'150e-9));
  CHECK(tl.seconds(0, 2'500'000) == Approx(2'500'150e-9));
}

TEST_CASE("ranks with clock samples are not flagged", "[timeline]") {
  RankTrace a = rank(0, 2, {ev(Op::Init, -1, 0, 1000)});
  a.clocks = {{ClockSync::AtInit, 0, 5000, 0, 0}};
  RankTrace b = rank(1, 2, {ev(Op::Init, -1, 0, 1000)});
  b.clocks = {{ClockSync::AtInit, 0, 9000, -4000, 0}};
  const Timeline tl({&a, &b});
  CHECK(tl.unplaced().empty());
  CHECK(tl.seconds(1, 1000) == Approx(1000e-9));
}
