#include "tools/mstep/network_options.hpp"

#include <cmath>

#include <fmt/format.h>

#include "tools/mstep/output.hpp"

namespace mstep::cli {

void add_network_options(CLI::App& cmd, NetworkOptions& o) {
  // One value per flag (--set A=1 --set B=2), so that the trace directory is never taken for one.
  cmd.add_option("--set", o.sets, "NAME=VALUE with a unit: L=2us, Gl=0.1ns/B, G=10GB/s, S=16k, S=inf, cold=off")
      ->allow_extra_args(false);
  cmd.add_option("--scale", o.scales, "NAME=FACTOR: L=10, G=0.5 (G is Gs and Gl), linear.B=2 (twice the bandwidth)")
      ->allow_extra_args(false);
  cmd.add_option("--network", o.network,
                 "Parameter file whose L, o, Os, Or, g, Gs, Gl, s, S, mpm and linear replace the baseline's "
                 "(e.g. share/params/<preset>.json); --set and --scale apply after it");
  cmd.add_flag("--no-cold", o.no_cold, "Without the cold-start and fresh-buffer terms (a warm network)");
}

void collect_edits(const CLI::App& cmd, NetworkOptions& o) {
  o.edits.clear();
  std::size_t set = 0, scale = 0;
  for (const CLI::Option* opt : cmd.parse_order()) {
    if (opt->get_name() == "--set" && set < o.sets.size()) o.edits.emplace_back(model::EditKind::Set, o.sets[set++]);
    else if (opt->get_name() == "--scale" && scale < o.scales.size())
      o.edits.emplace_back(model::EditKind::Scale, o.scales[scale++]);
  }
}

std::string network_options_help() {
  std::string names;
  for (auto n : model::whatif_names()) names += (names.empty() ? "" : ", ") + std::string(n);
  return "Names: " + names +
         "\nUnits: s, ms, us, ns, ps; ns/B, ps/B, s/B or a bandwidth (GB/s, MB/s, GiB/s, ...); sizes in bytes "
         "with k, m, g (KiB, MiB, GiB) or inf";
}

model::CalibrationParams read_params_or_fail(const std::string& file) {
  try {
    return model::read_params(file);
  } catch (const model::ParamsError& e) {
    fail(1, e.what());
  }
}

std::vector<model::Edit> parse_edits(const NetworkOptions& o) {
  // --no-cold first, then the edits in the order of the command line (so `--set L=2us --scale L=2`
  // gives 4 us).
  std::vector<model::Edit> edits;
  if (o.no_cold) edits.push_back(model::parse_edit("cold=off", model::EditKind::Set));
  for (const auto& [kind, text] : o.edits) {
    try {
      edits.push_back(model::parse_edit(text, kind));
    } catch (const model::WhatIfError& e) {
      fail(2, fmt::format("{} {}", kind == model::EditKind::Set ? "--set" : "--scale", e.what()));
    }
  }
  return edits;
}

model::EditedParams edited_network(const model::CalibrationParams& baseline, const NetworkOptions& o,
                                   const std::vector<model::Edit>& edits) {
  model::EditedParams net{baseline, {}, {}};
  if (!o.network.empty()) net = model::adopt_network(baseline, read_params_or_fail(o.network), o.network);
  try {
    model::EditedParams out = model::apply_edits(net.params, edits);
    out.changes.insert(out.changes.begin(), net.changes.begin(), net.changes.end());
    out.notes.insert(out.notes.begin(), net.notes.begin(), net.notes.end());
    return out;
  } catch (const model::WhatIfError& e) {
    fail(2, e.what());
  }
}

nlohmann::json changes_json(const std::vector<model::Change>& changes) {
  nlohmann::json out = nlohmann::json::array();
  for (const model::Change& c : changes)
    out.push_back({{"name", c.name}, {"unit", model::si_unit(c.quantity)}, {"from", number_or_null(c.from)},
                   {"to", number_or_null(c.to)}, {"text", model::describe(c)}});
  return out;
}

}  // namespace mstep::cli
