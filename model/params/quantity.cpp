#include "model/params/quantity.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace mstep::model {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kKi = 1024., kMi = 1048576., kGi = 1073741824.;

struct Unit {
  std::string_view text;
  double factor;
};
// Largest first: format_quantity takes the first unit the value reaches.
constexpr std::array kTimeUnits{Unit{"s", 1},     Unit{"ms", 1e-3}, Unit{"us", 1e-6},
                                Unit{"µs", 1e-6}, Unit{"ns", 1e-9}, Unit{"ps", 1e-12}};
constexpr std::array kPerByteUnits{Unit{"s/B", 1}, Unit{"ms/B", 1e-3}, Unit{"us/B", 1e-6}, Unit{"ns/B", 1e-9},
                                   Unit{"ps/B", 1e-12}};
constexpr std::array kBandwidthUnits{Unit{"TB/s", 1e12},  Unit{"GB/s", 1e9},  Unit{"MB/s", 1e6},
                                     Unit{"kB/s", 1e3},   Unit{"KB/s", 1e3},  Unit{"B/s", 1},
                                     Unit{"KiB/s", kKi},  Unit{"MiB/s", kMi}, Unit{"GiB/s", kGi}};
constexpr std::array kSizeUnits{Unit{"", 1},     Unit{"B", 1},   Unit{"k", kKi}, Unit{"K", kKi},
                                Unit{"KiB", kKi}, Unit{"m", kMi}, Unit{"M", kMi}, Unit{"MiB", kMi},
                                Unit{"g", kGi},  Unit{"G", kGi}, Unit{"GiB", kGi}};

template <std::size_t N>
const Unit* find_unit(const std::array<Unit, N>& units, std::string_view text) {
  for (const Unit& u : units)
    if (u.text == text) return &u;
  return nullptr;
}

template <std::size_t N>
std::string unit_list(const std::array<Unit, N>& units) {
  std::string s;
  for (const Unit& u : units)
    if (!u.text.empty()) s += (s.empty() ? "" : ", ") + std::string(u.text);
  return s;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

[[noreturn]] void bad_unit(std::string_view unit, std::string_view what, const std::string& accepted) {
  if (unit.empty()) throw std::invalid_argument(fmt::format("{} needs a unit ({})", what, accepted));
  throw std::invalid_argument(fmt::format("unknown unit '{}' for {} (accepted: {})", unit, what, accepted));
}

[[noreturn]] void zero_bandwidth() { throw std::invalid_argument("a bandwidth of 0 would never deliver a byte"); }

}  // namespace

std::optional<NumberWithUnit> split_number(std::string_view text) {
  text = trim(text);
  if (text == "inf" || text == "infinity") return NumberWithUnit{kInf, {}};
  double v = 0;
  const char* const last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(text.data(), last, v);
  // from_chars also reads "inf..." and "nan...": only digits make a number here.
  if (ec != std::errc() || end == text.data() || !std::isfinite(v)) return std::nullopt;
  return NumberWithUnit{v, trim(std::string_view(end, static_cast<std::size_t>(last - end)))};
}

double parse_quantity(std::string_view text, Quantity q) {
  const auto n = split_number(text);
  if (!n) throw std::invalid_argument(fmt::format("'{}' is not a number", trim(text)));
  const double v = n->value;
  const std::string_view u = n->unit;
  const bool infinite = std::isinf(v);
  switch (q) {
    case Quantity::Time: {
      if (infinite) throw std::invalid_argument("a time cannot be infinite");
      if (u.empty() && v == 0) return 0;
      const Unit* t = find_unit(kTimeUnits, u);
      if (!t) bad_unit(u, "a time", unit_list(kTimeUnits));
      return v * t->factor;
    }
    case Quantity::PerByte: {
      if (u.empty() && v == 0) return 0;
      if (const Unit* t = find_unit(kPerByteUnits, u); t && !infinite) return v * t->factor;
      if (const Unit* b = find_unit(kBandwidthUnits, u)) {
        if (v == 0) zero_bandwidth();
        return 1.0 / (v * b->factor);  // an infinite bandwidth: 0 seconds per byte
      }
      bad_unit(u, "a time per byte",
               fmt::format("{}, or a bandwidth: {}", unit_list(kPerByteUnits), unit_list(kBandwidthUnits)));
    }
    case Quantity::Bandwidth: {
      if (infinite && u.empty()) return kInf;
      if (const Unit* b = find_unit(kBandwidthUnits, u); b && !infinite) {
        if (v == 0) zero_bandwidth();
        return v * b->factor;
      }
      if (const Unit* t = find_unit(kPerByteUnits, u); t && !infinite) return v == 0 ? kInf : 1.0 / (v * t->factor);
      bad_unit(u, "a bandwidth",
               fmt::format("{}, a time per byte: {}, or inf", unit_list(kBandwidthUnits), unit_list(kPerByteUnits)));
    }
    case Quantity::Bytes: {
      if (infinite) {
        if (!u.empty()) throw std::invalid_argument("inf takes no unit");
        return kInf;
      }
      const Unit* b = find_unit(kSizeUnits, u);
      if (!b) throw std::invalid_argument(fmt::format("unknown unit '{}' for a size: bytes, with k, m or g (KiB, MiB, GiB), or inf", u));
      const double bytes = v * b->factor;
      if (bytes != std::floor(bytes)) throw std::invalid_argument("not a whole number of bytes");
      return bytes >= 0x1p64 ? kInf : bytes;
    }
    case Quantity::Count: {
      if (!u.empty() || infinite || v != std::floor(v) || std::abs(v) > 1e9)
        throw std::invalid_argument("a count is a plain whole number");
      return v;
    }
  }
  return v;
}

std::string format_quantity(Quantity q, double v) {
  if (std::isnan(v)) return "none";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // The largest unit that keeps the number at least 1 (163e-9 s is "163 ns").
  const auto scaled = [v](const auto& units) {
    if (v == 0) return std::string("0");
    for (const Unit& u : units)
      if (u.text != "µs" && u.text != "KB/s" && std::abs(v) >= u.factor * (1 - 1e-9))
        return fmt::format("{:.4g} {}", v / u.factor, u.text);
    return fmt::format("{:.4g} {}", v / units.back().factor, units.back().text);
  };
  switch (q) {
    case Quantity::Time: return scaled(kTimeUnits);
    case Quantity::PerByte: return scaled(kPerByteUnits);
    case Quantity::Bandwidth: {
      constexpr std::array decimal{kBandwidthUnits[0], kBandwidthUnits[1], kBandwidthUnits[2], kBandwidthUnits[3],
                                   kBandwidthUnits[5]};
      return scaled(decimal);
    }
    case Quantity::Bytes: return fmt::format("{} B", static_cast<std::uint64_t>(v));
    case Quantity::Count: return fmt::format("{}", static_cast<std::int64_t>(v));
  }
  return fmt::format("{}", v);
}

std::string_view si_unit(Quantity q) {
  switch (q) {
    case Quantity::Time: return "s";
    case Quantity::PerByte: return "s/B";
    case Quantity::Bandwidth: return "B/s";
    case Quantity::Bytes: return "B";
    case Quantity::Count: return "";
  }
  return "";
}

}  // namespace mstep::model
