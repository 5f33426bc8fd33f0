#include "model/analysis/whatif.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

namespace mstep::model {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

enum class Section : std::uint8_t { LogGPS, Mpm, Linear, Cold };

// One field of CalibrationParams that an edit can reach.
struct Leaf {
  std::string_view name;
  Quantity quantity;
  Section section;
  bool may_be_negative;  // fitted intercepts: the paper's MPM L and a linear T0 can be negative
};

constexpr std::array kLeaves{
    Leaf{"L", Quantity::Time, Section::LogGPS, false},
    Leaf{"o", Quantity::Time, Section::LogGPS, false},
    Leaf{"Os", Quantity::PerByte, Section::LogGPS, false},
    Leaf{"Or", Quantity::PerByte, Section::LogGPS, false},
    Leaf{"g", Quantity::Time, Section::LogGPS, false},
    Leaf{"Gs", Quantity::PerByte, Section::LogGPS, false},
    Leaf{"Gl", Quantity::PerByte, Section::LogGPS, false},
    Leaf{"s", Quantity::Bytes, Section::LogGPS, false},
    Leaf{"S", Quantity::Bytes, Section::LogGPS, false},
    Leaf{"H", Quantity::Time, Section::LogGPS, false},
    Leaf{"mpm.g", Quantity::PerByte, Section::Mpm, false},
    Leaf{"mpm.L", Quantity::Time, Section::Mpm, true},
    Leaf{"linear.below.T0", Quantity::Time, Section::Linear, true},
    Leaf{"linear.below.B", Quantity::Bandwidth, Section::Linear, false},
    Leaf{"linear.above.T0", Quantity::Time, Section::Linear, true},
    Leaf{"linear.above.B", Quantity::Bandwidth, Section::Linear, false},
    Leaf{"linear.boundary", Quantity::Bytes, Section::Linear, false},
    Leaf{"cold.send", Quantity::Time, Section::Cold, false},
    Leaf{"cold.recv", Quantity::Time, Section::Cold, false},
    Leaf{"cold.messages", Quantity::Count, Section::Cold, false},
    Leaf{"cold.fresh", Quantity::PerByte, Section::Cold, false},
};

// A name users write and the leaves it stands for.
struct Name {
  std::string_view name;
  std::array<std::string_view, 4> leaves;  // empty entries unused
};

constexpr std::array kNames{
    Name{"L", {"L"}},
    Name{"o", {"o"}},
    Name{"Os", {"Os"}},
    Name{"Or", {"Or"}},
    Name{"g", {"g"}},
    Name{"G", {"Gs", "Gl"}},
    Name{"Gs", {"Gs"}},
    Name{"Gl", {"Gl"}},
    Name{"s", {"s"}},
    Name{"S", {"S"}},
    Name{"H", {"H"}},
    Name{"mpm.g", {"mpm.g"}},
    Name{"mpm.L", {"mpm.L"}},
    Name{"linear.T0", {"linear.below.T0", "linear.above.T0"}},
    Name{"linear.B", {"linear.below.B", "linear.above.B"}},
    Name{"linear.below.T0", {"linear.below.T0"}},
    Name{"linear.below.B", {"linear.below.B"}},
    Name{"linear.above.T0", {"linear.above.T0"}},
    Name{"linear.above.B", {"linear.above.B"}},
    Name{"linear.boundary", {"linear.boundary"}},
    Name{"cold.send", {"cold.send"}},
    Name{"cold.recv", {"cold.recv"}},
    Name{"cold.messages", {"cold.messages"}},
    Name{"cold.fresh", {"cold.fresh"}},
    Name{"cold", {"cold.messages", "cold.send", "cold.recv", "cold.fresh"}},
};

constexpr auto kNameList = [] {
  std::array<std::string_view, kNames.size()> a{};
  for (std::size_t i = 0; i < kNames.size(); ++i) a[i] = kNames[i].name;
  return a;
}();

const Leaf& leaf(std::string_view name) {
  for (const Leaf& l : kLeaves)
    if (l.name == name) return l;
  throw std::logic_error(fmt::format("whatif: no parameter {}", name));
}

const Name* find_name(std::string_view name) {
  for (const Name& n : kNames)
    if (n.name == name) return &n;
  return nullptr;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Where a leaf lives in the parameters; the section must be there.
using Field = std::variant<double*, std::uint64_t*, std::uint32_t*>;

Field field(CalibrationParams& p, std::string_view name) {
  if (name == "L") return &p.loggps->L;
  if (name == "o") return &p.loggps->o;
  if (name == "Os") return &p.loggps->Os;
  if (name == "Or") return &p.loggps->Or;
  if (name == "g") return &p.loggps->g;
  if (name == "Gs") return &p.loggps->Gs;
  if (name == "Gl") return &p.loggps->Gl;
  if (name == "s") return &p.loggps->s;
  if (name == "S") return &p.loggps->S;
  if (name == "H") return &p.loggps->H;
  if (name == "mpm.g") return &p.mpm->g;
  if (name == "mpm.L") return &p.mpm->L;
  if (name == "linear.below.T0") return &p.linear->model.below.T0;
  if (name == "linear.below.B") return &p.linear->model.below.B;
  if (name == "linear.above.T0") return &p.linear->model.above.T0;
  if (name == "linear.above.B") return &p.linear->model.above.B;
  if (name == "linear.boundary") return &p.linear->model.boundary;
  if (name == "cold.send") return &p.cold->send;
  if (name == "cold.recv") return &p.cold->recv;
  if (name == "cold.messages") return &p.cold->messages;
  if (name == "cold.fresh") return &p.cold->fresh_per_byte;
  throw std::logic_error(fmt::format("whatif: no field {}", name));
}

// Sizes as doubles: kInfiniteBytes is +infinity.
double get(CalibrationParams& p, std::string_view name) {
  return std::visit(
      [](auto* f) -> double {
        using T = std::remove_pointer_t<decltype(f)>;
        if constexpr (std::is_same_v<T, std::uint64_t>) return *f == kInfiniteBytes ? kInf : static_cast<double>(*f);
        else return static_cast<double>(*f);
      },
      field(p, name));
}

void put(CalibrationParams& p, std::string_view name, double v) {
  std::visit(
      [v](auto* f) {
        using T = std::remove_pointer_t<decltype(f)>;
        if constexpr (std::is_same_v<T, double>) *f = v;
        else if constexpr (std::is_same_v<T, std::uint64_t>) *f = v >= 0x1p64 ? kInfiniteBytes : static_cast<T>(std::llround(v));
        else *f = static_cast<T>(std::llround(v));
      },
      field(p, name));
}

bool has(const CalibrationParams& p, Section s) {
  switch (s) {
    case Section::LogGPS: return p.loggps.has_value();
    case Section::Mpm: return p.mpm.has_value();
    case Section::Linear: return p.linear.has_value();
    case Section::Cold: return p.cold.has_value();
  }
  return false;
}

std::string_view section_text(Section s) {
  switch (s) {
    case Section::LogGPS: return "LogGPS parameters (L, o, g, G, s, S)";
    case Section::Mpm: return "MPM/BSPWB parameters (\"mpm\")";
    case Section::Linear: return "linear model (\"linear\")";
    case Section::Cold: return "cold-start terms (\"cold\")";
  }
  return "?";
}

// The value of `l` after scaling `v` by `f`.
double scaled(const Leaf& l, double v, double f, const Edit& e) {
  if (l.quantity == Quantity::Bandwidth && f == 0)
    throw WhatIfError(fmt::format("{}: a bandwidth scaled by 0 would never deliver a byte", e.name));
  if (std::isinf(v)) return v;  // infinite S or B stays infinite (inf x 0 is no number)
  const double r = v * f;
  if (l.quantity == Quantity::Bytes || l.quantity == Quantity::Count) return r >= 0x1p64 ? kInf : std::round(r);
  return r;
}

}  // namespace

std::span<const std::string_view> whatif_names() { return kNameList; }

Edit parse_edit(std::string_view text, EditKind kind) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos)
    throw WhatIfError(fmt::format("'{}': expected NAME={}, NAME one of {}", text,
                                  kind == EditKind::Set ? "VALUE" : "FACTOR", fmt::join(kNameList, ", ")));
  Edit e;
  e.kind = kind;
  e.name = std::string(trim(text.substr(0, eq)));
  const std::string_view value = trim(text.substr(eq + 1));
  const Name* n = find_name(e.name);
  if (!n) throw WhatIfError(fmt::format("{}: unknown parameter '{}' (accepted: {})", text, e.name, fmt::join(kNameList, ", ")));
  if (value.empty()) throw WhatIfError(fmt::format("{}: no value", text));
  const Leaf& l = leaf(n->leaves[0]);
  e.quantity = l.quantity;
  if (e.name == "cold") {
    if (kind == EditKind::Scale || value != "off")
      throw WhatIfError(fmt::format("{}: cold takes only 'off' (--set cold=off, or --no-cold); edit cold.send, "
                                    "cold.recv, cold.messages or cold.fresh one by one",
                                    text));
    e.off = true;
    return e;
  }
  if (kind == EditKind::Scale) {
    const auto f = split_number(value);
    if (!f || !f->unit.empty() || std::isinf(f->value))
      throw WhatIfError(fmt::format("{}: a scale factor is a plain number, e.g. {}=2 or {}=0.5", text, e.name, e.name));
    if (f->value < 0) throw WhatIfError(fmt::format("{}: a scale factor cannot be negative", text));
    e.value = f->value;
    return e;
  }
  try {
    e.value = parse_quantity(value, l.quantity);
  } catch (const std::invalid_argument& bad) {
    throw WhatIfError(fmt::format("{}: {}", text, bad.what()));
  }
  if (e.value < 0 && !l.may_be_negative) throw WhatIfError(fmt::format("{}: {} cannot be negative", text, e.name));
  return e;
}

std::string describe(const Change& c) {
  return fmt::format("{} {} -> {}", c.name, format_quantity(c.quantity, c.from), format_quantity(c.quantity, c.to));
}

EditedParams apply_edits(const CalibrationParams& base, std::span<const Edit> edits) {
  EditedParams out;
  out.params = base;
  CalibrationParams& p = out.params;
  for (const Edit& e : edits) {
    const Name* n = find_name(e.name);
    if (!n) throw WhatIfError(fmt::format("unknown parameter '{}' (accepted: {})", e.name, fmt::join(kNameList, ", ")));
    const Section section = leaf(n->leaves[0]).section;
    if (e.name == "cold" && !e.off) throw WhatIfError("cold takes only 'off'");
    if (e.off) {
      if (!p.cold || !p.cold->any()) {
        out.notes.push_back("cold=off: the parameters have no cold-start or fresh-buffer terms to remove");
        p.cold.reset();
        continue;
      }
      for (std::string_view name : n->leaves)
        if (!name.empty() && get(p, name) != 0) out.changes.push_back({std::string(name), leaf(name).quantity, get(p, name), 0});
      p.cold.reset();  // none at all: what ColdStart{} means, stated plainly
      continue;
    }
    if (!has(p, section))
      throw WhatIfError(fmt::format("{}: the baseline has no {} to edit", e.name, section_text(section)));
    for (std::string_view name : n->leaves) {
      if (name.empty()) continue;
      const Leaf& l = leaf(name);
      const double from = get(p, name);
      const double to = e.kind == EditKind::Set ? e.value : scaled(l, from, e.value, e);
      put(p, name, to);
      out.changes.push_back({std::string(name), l.quantity, from, get(p, name)});
    }
  }
  return out;
}

EditedParams adopt_network(const CalibrationParams& base, const CalibrationParams& network,
                           std::string_view network_name) {
  EditedParams out;
  out.params = base;
  CalibrationParams& p = out.params;
  CalibrationParams net = network;  // get() needs a mutable object; this one is thrown away
  const auto take = [&](Section section, auto&& assign) {
    if (!has(net, section)) {
      if (has(base, section))
        out.notes.push_back(fmt::format("{} has no {}: kept from the baseline", network_name, section_text(section)));
      return;
    }
    const bool had = has(p, section);
    std::vector<std::pair<std::string_view, double>> before;
    for (const Leaf& l : kLeaves)
      if (l.section == section) before.emplace_back(l.name, had ? get(p, l.name) : std::numeric_limits<double>::quiet_NaN());
    assign();
    for (const auto& [name, from] : before) {
      const double to = get(p, name);
      if (!(from == to)) out.changes.push_back({std::string(name), leaf(name).quantity, from, to});
    }
  };
  if (base.loggps && network.loggps) {
    // Not numbers, so not in `changes`: how the rendezvous is charged (model/cost/loggps.hpp).
    auto how = [](const LogGPSParams& l) -> std::string {
      if (l.rendezvous_model == RendezvousModel::Paper) return "as MODELS.md";
      return l.rendezvous_push ? "as calibrated, the data leaving only with its sender inside MPI" : "as calibrated";
    };
    if (how(*base.loggps) != how(*network.loggps))
      out.notes.push_back(fmt::format("{} charges the rendezvous {} (the baseline: {})", network_name,
                                      how(*network.loggps), how(*base.loggps)));
  }
  take(Section::LogGPS, [&] {
    // The processes count P describes the calibration run, not the network: kept.
    const std::uint32_t P = p.loggps ? p.loggps->P : net.loggps->P;
    p.loggps = net.loggps;
    p.loggps->P = P;
  });
  take(Section::Mpm, [&] {
    if (p.mpm && p.mpm->combine != net.mpm->combine)
      out.notes.push_back(fmt::format("{} counts h-relations with {} (the baseline with {})", network_name,
                                      net.mpm->combine == HCombine::Sum ? "sum" : "max",
                                      p.mpm->combine == HCombine::Sum ? "sum" : "max"));
    p.mpm = net.mpm;
  });
  take(Section::Linear, [&] { p.linear = net.linear; });
  // The collectives measured at calibration belong to the network they were measured on.
  if (!network.collectives.empty()) {
    p.collectives = network.collectives;
    out.notes.push_back(fmt::format("collectives: {}'s measured calls are charged", network_name));
  } else if (!base.collectives.empty()) {
    out.notes.push_back(fmt::format("{} has no measured collectives: the baseline's are kept", network_name));
  }
  if (base.cold && base.cold->any())
    out.notes.push_back(fmt::format("the baseline's cold-start terms are kept ({} is taken for L, o, g, G, s, S, mpm "
                                    "and linear only); --no-cold removes them",
                                    network_name));
  return out;
}

}  // namespace mstep::model
