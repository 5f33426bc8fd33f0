// The what-if network of `mstep whatif` and `mstep advise`: --network FILE, then --set and --scale
// in command-line order, then --no-cold, applied to the baseline parameters.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "model/analysis/whatif.hpp"
#include "model/params/params.hpp"

namespace mstep::cli {

struct NetworkOptions {
  std::string network;                 // --network FILE
  std::vector<std::string> sets, scales;
  bool no_cold = false;
  std::vector<std::pair<model::EditKind, std::string>> edits;  // --set and --scale as given, in order

  bool any() const { return !network.empty() || !sets.empty() || !scales.empty() || no_cold; }
};

// Adds --set, --scale, --network and --no-cold to `cmd`.
void add_network_options(CLI::App& cmd, NetworkOptions& o);
// Call in the subcommand's callback: fills o.edits from the parse order.
void collect_edits(const CLI::App& cmd, NetworkOptions& o);
// "Names: ... Units: ..." for a footer.
std::string network_options_help();

// The parameter file, or exit 1 with its one-line error.
model::CalibrationParams read_params_or_fail(const std::string& file);

// --no-cold and the edits, parsed (exit 2 on a bad one, naming the option): call before reading
// any file, so that a mistake fails at once.
std::vector<model::Edit> parse_edits(const NetworkOptions& o);
// `edits` applied to `baseline` after the --network file's network (exit 2 when an edit does not
// fit the parameters).
model::EditedParams edited_network(const model::CalibrationParams& baseline, const NetworkOptions& o,
                                   const std::vector<model::Edit>& edits);

// The changes as share/report-schema.md writes them: name, unit, from, to (null: infinite), text.
nlohmann::json changes_json(const std::vector<model::Change>& changes);

}  // namespace mstep::cli
