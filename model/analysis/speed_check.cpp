#include "model/analysis/speed_check.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mstep::model {
namespace {

// The half round trip of the first raw size at or above S (0 when there is none).
double at_S(const CalibrationParams& p, std::uint64_t& size) {
  if (!p.loggps || p.loggps->S == kInfiniteBytes) return 0;
  for (const RawPoint& r : p.raw)
    if (r.bytes >= p.loggps->S) {
      size = r.bytes;
      return r.half_rtt;
    }
  return 0;
}

std::string us(double s) { return fmt::format("{:.3g} us", s * 1e6); }

}  // namespace

std::optional<std::string> speed_change(const CalibrationParams& before, const CalibrationParams& after,
                                        double tolerance) {
  std::vector<std::string> moved;
  auto compare = [&](const std::string& what, double a, double b) {
    if (a > 0 && b > 0 && std::abs(b / a - 1) > tolerance)
      moved.push_back(fmt::format("{} {} -> {} ({:+.0f}%)", what, us(a), us(b), 100 * (b / a - 1)));
  };
  compare("half round trip of 8 B", before.meta.half_rtt_8B, after.meta.half_rtt_8B);
  std::uint64_t size_before = 0, size_after = 0;
  const double s_before = at_S(before, size_before), s_after = at_S(after, size_after);
  if (size_before == size_after) compare(fmt::format("at {} B (S)", size_before), s_before, s_after);
  if (moved.empty()) return std::nullopt;
  return fmt::format("the machine changed speed during these runs: {} (calibrated again after them); rows whose "
                     "runs came out in the other period miss by as much",
                     fmt::join(moved, ", "));
}

}  // namespace mstep::model
