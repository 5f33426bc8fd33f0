#include "model/params/params_check.hpp"

#include <fmt/format.h>

namespace mstep::model {
namespace {

std::string_view last_part(std::string_view key) {
  const auto dot = key.rfind('.');
  std::string_view k = dot == std::string_view::npos ? key : key.substr(dot + 1);
  if (const auto bracket = k.find('['); bracket != std::string_view::npos) k = k.substr(0, bracket);
  return k;
}

}  // namespace

std::string allowed_range(std::string_view key) {
  const std::string_view k = last_part(key);
  if (key.rfind("broadcast.", 0) == 0) return "seconds, >= 0 (null for infinite)";
  if (k == "B") return "bytes per second, > 0 (null for infinite)";
  if (k == "residual") return "a relative error, finite and >= 0";
  if (k == "Os" || k == "Or" || k == "Gs" || k == "Gl" || k == "fresh_per_byte" || key == "mpm.g")
    return "seconds per byte, finite and >= 0";
  if (k == "s" || k == "S") return "bytes, a whole number >= 0 (null for infinite)";
  if (k == "T0") return "seconds, finite";
  if (k == "L" || k == "o" || k == "g" || k == "H" || k == "send" || k == "recv" || k == "half_rtt" || k == "half_rtt_8B")
    return "seconds, finite and >= 0";
  return "a finite number >= 0";
}

void out_of_range(const std::string& file, std::string_view key, std::string_view value) {
  throw ParamsError(fmt::format("{}: key '{}': {} is out of range: expected {}", file, key, value, allowed_range(key)));
}

void check_params(const CalibrationParams& p, const std::string& file) {
  if (const auto& l = p.loggps) {
    if (l->s != kInfiniteBytes && l->S != kInfiniteBytes && l->s > l->S)
      throw ParamsError(fmt::format("{}: key 's': {} is out of range: expected bytes <= S ({})", file, l->s, l->S));
    if (l->L == 0 && l->o == 0 && l->g == 0 && l->Os == 0 && l->Or == 0 && l->Gs == 0 && l->Gl == 0)
      throw ParamsError(fmt::format("{}: key 'L': 0 is out of range: expected seconds > 0 when o, g, Os, Or, Gs "
                                    "and Gl are 0 too (a machine whose messages cost nothing)", file));
  }
  if (const auto& m = p.mpm; m && m->g == 0 && m->L == 0)
    throw ParamsError(fmt::format("{}: key 'mpm.g': 0 is out of range: expected seconds per byte > 0 when "
                                  "mpm.L is 0 too (steps that cost nothing)", file));
  // linear T0 may be negative: it is a fitted intercept (B > 0 is checked where it is read).
}

}  // namespace mstep::model
