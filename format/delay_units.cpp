#include "format/delay_units.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace mstep {
namespace {

// A number followed by one of `units` (suffix, factor); false if anything else follows.
struct Unit {
  const char* suffix;
  double factor;
};

template <std::size_t N>
bool parse_with_units(const char* text, const Unit (&units)[N], double& out) {
  if (!text || !*text) return false;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || !std::isfinite(v) || v < 0) return false;
  for (const Unit& u : units) {
    if (std::strcmp(end, u.suffix) == 0) {
      out = v * u.factor;
      return true;
    }
  }
  return false;
}

constexpr Unit kTimeUnits[] = {{"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
constexpr Unit kPerByteUnits[] = {{"s/B", 1},      {"ms/B", 1e-3}, {"us/B", 1e-6}, {"ns/B", 1e-9},
                                  {"ps/B", 1e-12}, {"ns", 1e-9},   {"ps", 1e-12}};

}  // namespace

bool parse_delay_time(const char* text, double& seconds) { return parse_with_units(text, kTimeUnits, seconds); }

bool parse_delay_per_byte(const char* text, double& seconds_per_byte) {
  if (parse_with_units(text, kPerByteUnits, seconds_per_byte)) return true;
  // Zero needs no unit (`mstep sensitivity --sweep G=0,...` passes its first point so).
  double v = 0;
  if (parse_with_units(text, kTimeUnits, v) && v == 0 && std::strpbrk(text, "smnup") == nullptr) {
    seconds_per_byte = 0;
    return true;
  }
  return false;
}

}  // namespace mstep
