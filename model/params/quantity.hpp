// Values with units, as people type and read them: "2us", "0.1ns/B", "10GB/s", "16k", "inf".
// Used by `mstep whatif` for its edits; SI units inside (seconds, bytes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mstep::model {

// What a value measures: how it is written and printed.
enum class Quantity : std::uint8_t {
  Time,       // seconds: s, ms, us (or µs), ns, ps
  PerByte,    // seconds per byte: s/B, ms/B, us/B, ns/B, ps/B; a bandwidth (GB/s) is taken as 1/B
  Bandwidth,  // bytes per second: B/s, kB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s (decimal
              // prefixes as in `mstep params show`); a per-byte time is taken as 1/x; inf
  Bytes,      // a whole number of bytes, with k, m, g (KiB, MiB, GiB: powers of 1024) or B; inf
  Count,      // a plain whole number
};

// The number at the start of `text` and the unit after it (spaces dropped); "inf" and "infinity"
// alone are +infinity. nullopt when `text` does not start with a number.
struct NumberWithUnit {
  double value = 0;
  std::string_view unit;
};
std::optional<NumberWithUnit> split_number(std::string_view text);

// `text` as a value of `q` in SI units (+infinity for an infinite size or bandwidth). A time or
// per-byte value needs a unit unless it is 0: "2" is more likely a slip for 2 us than a wish for
// 2 seconds. Negative values are returned as such (the caller knows whether they make sense).
// std::invalid_argument, one line naming the accepted units, on anything else.
double parse_quantity(std::string_view text, Quantity q);

// A value for people, in the unit that reads best: "163 ns", "56.5 ps/B", "5.6 GB/s", "8256 B",
// "inf"; "none" for NaN.
std::string format_quantity(Quantity q, double value);

// The SI unit values of `q` are in: "s", "s/B", "B/s", "B", "" (count).
std::string_view si_unit(Quantity q);

}  // namespace mstep::model
