// Shared bits of the subcommands' output.
#pragma once

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "model/trace/problem_lines.hpp"
#include "model/trace/trace_dir.hpp"

namespace mstep::cli {

// One line on stderr ("mstep: ..."), and the exit code.
[[noreturn]] inline void fail(int code, const std::string& message) {
  std::fprintf(stderr, "mstep: %s\n", message.c_str());
  throw CLI::RuntimeError(code);
}

// A JSON number, or null for an infinite or undefined value (an error of a zero actual, S=inf).
inline nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

inline void add_format_option(CLI::App& cmd, std::string& format) {
  cmd.add_option("--format", format, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
}

// Every problem of the trace on stderr, one line each (past ten of a kind, one line says how many
// more: model/trace/problem_lines.hpp); a trace with problems exits with 1 after printing all that
// could be read.
inline void warn_problems(std::span<const std::string> problems) {
  for (const auto& p : problem_lines(problems)) std::fprintf(stderr, "mstep: warning: %s\n", p.c_str());
}
inline void report_problems(const TraceDir& d) {
  warn_problems(d.problems);
  if (!d.problems.empty()) throw CLI::RuntimeError(1);
}

// A trace directory to write (mstep synth, mstep import): refused in one line (exit 1) when it holds
// something and `force` is not given; with `force`, a trace already there is removed first.
// Returns whether the directory was made here (so that a failed write can take it away again).
inline bool prepare_trace_dir(const std::string& out, bool force) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir(out);
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec) && !force) fail(1, out + " exists and is not empty (use -f to overwrite)");
  if (force && fs::exists(dir / kMetaFileName, ec)) fs::remove_all(dir, ec);
  const bool created = !fs::exists(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) fail(1, "cannot create " + out + ": " + ec.message());
  return created;
}

}  // namespace mstep::cli
