// The subcommands of `mstep`. Each adds itself to the CLI and runs when chosen; run functions
// return the process exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace mstep::cli {

void add_record(CLI::App& app);
void add_stats(CLI::App& app);
void add_dump(CLI::App& app);
void add_calibrate(CLI::App& app);
void add_params(CLI::App& app);
void add_report(CLI::App& app);
void add_whatif(CLI::App& app);
void add_advise(CLI::App& app);
void add_validate(CLI::App& app);
void add_sensitivity(CLI::App& app);
void add_synth(CLI::App& app);
void add_export(CLI::App& app);
void add_import(CLI::App& app);

// Where libmstep.so lies relative to this executable (bin/../lib), without any environment.
std::string find_preload_library();

}  // namespace mstep::cli
