// mstep: record an MPI run, and say where its time went.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "format/codec.hpp"
#include "tools/allocator/large_pages.hpp"
#include "tools/mstep/commands.hpp"

int main(int argc, char** argv) {
  // The commands that read traces run on huge pages (tools/allocator/large_pages.cpp); those that
  // start MPI jobs (record, calibrate, validate, sensitivity) keep the environment they were given.
  if (argc > 1) {
    constexpr std::string_view kReaders[] = {"report", "whatif", "advise", "export", "stats", "dump", "synth", "import"};
    if (std::find(std::begin(kReaders), std::end(kReaders), std::string_view(argv[1])) != std::end(kReaders))
      mstep::use_large_pages(argv);
  }
  CLI::App app{"mstep: record MPI runs, count them, and model where their time goes", "mstep"};
  app.set_version_flag("--version", std::string("mstep ") + MSTEP_VERSION);
  app.require_subcommand(1);
  // One line per error, as every mstep error is.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return fmt::format("mstep: {} (see mstep --help)\n", e.what());
  });
  mstep::cli::add_record(app);
  mstep::cli::add_stats(app);
  mstep::cli::add_dump(app);
  mstep::cli::add_calibrate(app);
  mstep::cli::add_params(app);
  mstep::cli::add_report(app);
  mstep::cli::add_whatif(app);
  mstep::cli::add_advise(app);
  mstep::cli::add_validate(app);
  mstep::cli::add_sensitivity(app);
  mstep::cli::add_synth(app);
  mstep::cli::add_export(app);
  mstep::cli::add_import(app);
  mstep::cli::add_compress(app);
  // `mstep record [options] -- command...`: CLI11 hands a prefix command's words over only when
  // they are not behind "--", so drop the "--" that ends record's own options (and only that one:
  // the command may have a "--" of its own).
  std::vector<std::string> args(argv + 1, argv + argc);
  if (const auto rec = std::find(args.begin(), args.end(), "record"); rec != args.end()) {
    for (auto it = rec + 1; it != args.end(); ++it) {
      if (*it == "--") {
        args.erase(it);
        break;
      }
      if (it->empty() || (*it)[0] != '-') break;  // the command itself
      const bool takes_value =
          *it == "-o" || *it == "--output" || *it == "--depth" || *it == "--buffer" || *it == "--writer" ||
          *it == "--compress";
      if (takes_value && it + 1 != args.end()) ++it;
    }
  }
  // An unknown command word: say which, rather than CLI11's "a subcommand is required".
  if (!args.empty() && args.front()[0] != '-') {
    bool known = false;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      known = known || sub->get_name() == args.front();
    if (!known) {
      std::string names;
      for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        names += (names.empty() ? "" : ", ") + sub->get_name();
      std::fprintf(stderr, "mstep: unknown command '%s' (commands: %s)\n", args.front().c_str(), names.c_str());
      return 2;
    }
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    // Help and version exit 0; a usage error exits 2, whatever CLI11's own code for it. A
    // subcommand's RuntimeError carries the exit code it chose.
    const int code = app.exit(e);
    if (code == 0 || e.get_name() == "RuntimeError") return code;
    return 2;
  } catch (const mstep::TraceError& e) {
    std::fprintf(stderr, "mstep: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mstep: %s\n", e.what());
    return 1;
  }
  return 0;
}
