#include "model/analysis/sensitivity.hpp"

#include <cmath>

#include <fmt/format.h>

#include "model/params/quantity.hpp"

namespace mstep::model {

std::string_view sweep_name(SweepParam p) {
  switch (p) {
    case SweepParam::L: return "L";
    case SweepParam::o: return "o";
    case SweepParam::g: return "g";
    case SweepParam::G: return "G";
  }
  return "?";
}

std::string_view delay_variable(SweepParam p) {
  switch (p) {
    case SweepParam::L: return "MSTEP_DELAY_L";
    case SweepParam::o: return "MSTEP_DELAY_O";
    case SweepParam::g: return "MSTEP_DELAY_GAP";
    case SweepParam::G: return "MSTEP_DELAY_PER_BYTE";
  }
  return "?";
}

Sweep parse_sweep(std::string_view text) {
  const auto eq = text.find('=');
  const std::string_view name = text.substr(0, eq);
  Sweep s;
  if (name == "L") s.param = SweepParam::L;
  else if (name == "o") s.param = SweepParam::o;
  else if (name == "g") s.param = SweepParam::g;
  else if (name == "G") s.param = SweepParam::G;
  else
    throw WhatIfError(fmt::format("--sweep '{}': the parameter must be L, o, g or G (e.g. --sweep L=0,5us,10us)", text));
  if (eq == std::string_view::npos || eq + 1 == text.size())
    throw WhatIfError(fmt::format("--sweep '{}': give values after '=', e.g. {}=0,5us,10us", text, name));
  const Quantity q = s.param == SweepParam::G ? Quantity::PerByte : Quantity::Time;
  std::string_view rest = text.substr(eq + 1);
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    double v = 0;
    try {
      v = parse_quantity(item, q);
    } catch (const std::invalid_argument& e) {
      throw WhatIfError(fmt::format("--sweep '{}': '{}': {}", text, item, e.what()));
    }
    if (!(v >= 0) || !std::isfinite(v))
      throw WhatIfError(fmt::format("--sweep '{}': '{}' must be a finite amount of 0 or more", text, item));
    s.values.push_back(v);
    s.labels.emplace_back(item);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return s;
}

EditedParams add_to_params(const CalibrationParams& base, SweepParam p, double v) {
  EditedParams out{base, {}, {}};
  CalibrationParams& c = out.params;
  auto add = [&](std::string name, Quantity q, double& field, double amount) {
    const double from = field;
    field += amount;
    out.changes.push_back({std::move(name), q, from, field});
  };
  if (c.loggps) {
    switch (p) {
      case SweepParam::L: add("L", Quantity::Time, c.loggps->L, v); break;
      case SweepParam::o: add("o", Quantity::Time, c.loggps->o, v); break;
      case SweepParam::g: add("g", Quantity::Time, c.loggps->g, v); break;
      case SweepParam::G:  // the apparatus's k G on the wire: every byte's, eager or rendezvous
        add("Gs", Quantity::PerByte, c.loggps->Gs, v);
        add("Gl", Quantity::PerByte, c.loggps->Gl, v);
        break;
    }
  }
  if (c.mpm) {
    if (p == SweepParam::L) add("mpm.L", Quantity::Time, c.mpm->L, v);
    else if (p == SweepParam::o) add("mpm.L", Quantity::Time, c.mpm->L, 2 * v);
    else if (p == SweepParam::G) add("mpm.g", Quantity::PerByte, c.mpm->g, v);
    else out.notes.push_back("MPM and BSPWB have no gap g: unchanged");
  }
  if (c.linear) {
    auto& m = c.linear->model;
    if (p == SweepParam::L || p == SweepParam::o) {
      const double t = p == SweepParam::L ? v : 2 * v;
      add("linear.below.T0", Quantity::Time, m.below.T0, t);
      add("linear.above.T0", Quantity::Time, m.above.T0, t);
    } else if (p == SweepParam::G) {
      // Seconds per byte add; bandwidths are their inverses.
      for (const auto& [name, cost] : {std::pair<const char*, LinearCost*>{"linear.below.B", &m.below},
                                       std::pair<const char*, LinearCost*>{"linear.above.B", &m.above}}) {
        const double from = cost->B;
        cost->B = 1.0 / (1.0 / cost->B + v);
        out.changes.push_back({name, Quantity::Bandwidth, from, cost->B});
      }
    } else {
      out.notes.push_back("linear has no gap g: unchanged");
    }
  }
  return out;
}

double slowdown(double base_s, double s) { return base_s > 0 ? s / base_s : std::nan(""); }

double apparatus_slowdown(double base_s, double s, double zero_s) {
  return base_s > 0 ? 1.0 + (s - zero_s) / base_s : std::nan("");
}

double slowdown_error_pct(double measured, double predicted) {
  return measured > 0 ? 100.0 * (predicted - measured) / measured : std::nan("");
}

}  // namespace mstep::model
