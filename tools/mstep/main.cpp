// mstep: record an MPI run, and say where its time went.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format/codec.hpp"
#include "tools/mstep/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"mstep: record MPI runs, count them, and model where their time goes"};
  app.set_version_flag("--version", std::string("mstep ") + MSTEP_VERSION);
  app.require_subcommand(1);
  // One line per error, as every mstep error is.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return fmt::format("mstep: {} (see mstep --help)\n", e.what());
  });
  mstep::cli::add_record(app);
  mstep::cli::add_stats(app);
  mstep::cli::add_dump(app);
  // `mstep record [options] -- command...`: CLI11 hands a prefix command's words over only when
  // they are not behind "--", so drop the first "--" after "record".
  std::vector<std::string> args(argv + 1, argv + argc);
  if (const auto rec = std::find(args.begin(), args.end(), "record"); rec != args.end()) {
    if (const auto dashes = std::find(rec, args.end(), "--"); dashes != args.end()) args.erase(dashes);
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const mstep::TraceError& e) {
    std::fprintf(stderr, "mstep: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mstep: %s\n", e.what());
    return 1;
  }
  return 0;
}
