// The subcommands of `mstep`. Each adds itself to the CLI and runs when chosen; run functions
// return the process exit code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
void add_compress(CLI::App& app);

// What compressing a trace's stored frames did (tools/mstep/cmd_compress.cpp).
struct CompressSummary {
  std::size_t files = 0, files_changed = 0, frames = 0;
  std::uint64_t bytes_before = 0, bytes_after = 0;
  double seconds = 0;
  std::vector<std::string> problems;  // one line a rank file that could not be compressed
};
// Compresses the stored frames of every rank file of `dir`, `jobs` files at a time. Throws
// TraceError when the directory cannot be listed; a file that fails is a line in `problems`.
CompressSummary compress_trace_dir(const std::string& dir, int level, int jobs);
std::string describe(const CompressSummary& s);
int zstd_level_setting();  // MSTEP_ZSTD_LEVEL, as the recorder reads it
int default_jobs();

// Where libmstep.so lies relative to this executable (bin/../lib), without any environment.
std::string find_preload_library();

}  // namespace mstep::cli
