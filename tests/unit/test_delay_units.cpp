// The delay apparatus's settings as text (format/delay_units.hpp): what each unit means, and what
// is refused.
#include <catch2/catch.hpp>

#include "format/delay_units.hpp"

using namespace mstep;

TEST_CASE("delay units: times and times per byte read as written", "[delay]") {
  double v = -1;
  REQUIRE(parse_delay_time("12.5us", v));
  CHECK(v == Approx(12.5e-6));
  REQUIRE(parse_delay_time("0.002", v));  // a bare number is seconds
  CHECK(v == Approx(2e-3));
  REQUIRE(parse_delay_per_byte("2ns/B", v));
  CHECK(v == Approx(2e-9));
  REQUIRE(parse_delay_per_byte("0.5ns", v));
  CHECK(v == Approx(0.5e-9));
  // Zero needs no unit: `mstep sensitivity --sweep G=0,...` passes its first point as "0".
  v = -1;
  REQUIRE(parse_delay_per_byte("0", v));
  CHECK(v == 0);
  REQUIRE(parse_delay_per_byte("0.0", v));
  CHECK(v == 0);
}

TEST_CASE("delay units: what is refused", "[delay]") {
  double v = 0;
  for (const char* t : {"", "us", "-1us", "5 us", "5usx", "inf", "nan"}) CHECK_FALSE(parse_delay_time(t, v));
  // A bare per-byte amount other than 0 has no unit to say what it is.
  for (const char* t : {"", "2", "-2ns/B", "2ns/b", "2us/KB", "0us", "0s"}) CHECK_FALSE(parse_delay_per_byte(t, v));
}
