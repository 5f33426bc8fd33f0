// Shared bits of the subcommands' output.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

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

// Every problem of the trace on stderr, one line each; a trace with problems exits with 1 after
// printing all that could be read.
inline void report_problems(const TraceDir& d) {
  for (const auto& p : d.problems) std::fprintf(stderr, "mstep: warning: %s\n", p.c_str());
  if (!d.problems.empty()) throw CLI::RuntimeError(1);
}

}  // namespace mstep::cli
