// mstep validate's outputs: the text tables on standard output, validation.md and validation.json
// in the output directory (the tables of model/analysis/validation.hpp, the cross table of
// validate_cross.hpp), and what they share with the runs' side: the experiments' labels and the
// rank count the goals are stated at.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tools/mstep/validate_runs.hpp"
#include "tools/mstep/validate_suite.hpp"

namespace mstep::cli {

inline constexpr int kSummaryRanks = 2;  // the goals are stated at 2 ranks
// UCX's TCP transport: the second real network of a one-node machine (issue 13).
inline constexpr const char* kTcpLabel = "tcp";

// "K=V K2=V2"
std::string env_text(const std::map<std::string, std::string>& env);
// The 1-minute load average: other processes on the machine slow the runs (not the models).
double load_average();

// The tables of every experiment, the cross table and the goals: printed, and written to
// o.dir/validation.md and o.dir/validation.json. `load_before`: the load average at the start.
void write_outputs(const ValidateOptions& o, const Suite& suite, const std::vector<Experiment>& xs, int cores,
                   double load_before);

}  // namespace mstep::cli
