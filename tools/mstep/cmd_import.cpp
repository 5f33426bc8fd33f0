// mstep import: another tool's trace as an mstep trace directory. --otf2: an OTF2 archive of
// Score-P, EZTrace 2 or mstep export (model/import/otf2_import.hpp), so that report, whatif and
// the rest predict from it.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/trace_format.hpp"
#include "model/export/otf2.hpp"
#include "model/import/otf2_import.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/output.hpp"

namespace mstep::cli {
namespace {
namespace fs = std::filesystem;

struct ImportOptions {
  std::string otf2, out;
  bool force = false;
  bool keep_clocks = false;
};

// A failed import leaves no half-written trace: the directory if it made it, else the rank files.
void discard(const fs::path& dir, bool created) {
  std::error_code ec;
  if (created) {
    fs::remove_all(dir, ec);
    return;
  }
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".mst") fs::remove(entry.path(), ec);
}

int run_import(const ImportOptions& o) {
  std::string anchor;
  try {
    anchor = model::otf2_anchor(o.otf2);
  } catch (const model::Otf2Error& e) {
    std::fprintf(stderr, "mstep: %s\n", e.what());
    return 1;
  }
  const fs::path dir(o.out);
  const bool created = prepare_trace_dir(o.out, o.force);
  model::Otf2ImportSummary s;
  try {
    s = model::import_otf2(anchor, o.out, o.keep_clocks);
  } catch (const model::Otf2Error& e) {
    std::fprintf(stderr, "mstep: cannot import %s: %s\n", anchor.c_str(), e.what());
    discard(dir, created);
    return 1;
  } catch (const TraceError& e) {
    std::fprintf(stderr, "mstep: cannot write %s: %s\n", o.out.c_str(), e.what());
    discard(dir, created);
    return 1;
  }
  nlohmann::json skipped = nlohmann::json::object();
  for (const auto& [kind, n] : s.skipped) skipped[kind] = n;
  const nlohmann::json meta = {
      {"format_version", kTraceVersion},
      {"ranks", s.ranks},
      {"command", std::vector<std::string>{"mstep", "import", "--otf2", anchor}},
      {"mpi_library", fmt::format("imported from OTF2 ({})", s.creator.empty() ? "creator unknown" : s.creator)},
      {"hosts", std::vector<std::string>{"imported"}},
      {"clock", "monotonic"},
      {"ticks_per_second", 1e9},
      {"stack_depth", 0},
      {"imported", {{"format", "otf2"}, {"archive", anchor}, {"creator", s.creator}, {"skipped", skipped},
                    {"timer_resolution", s.ticks_per_second},
                    {"clocks", s.clocks.empty() ? "as recorded" : s.clocks}}},
      {"complete", true},
      {"write_failed_ranks", 0},
  };
  std::ofstream(dir / kMetaFileName) << meta.dump(2) << "\n";
  if (!s.clocks.empty()) std::fprintf(stderr, "mstep: note: %s\n", s.clocks.c_str());
  if (s.synthesized)
    std::fprintf(stderr, "mstep: note: %d MPI_Init/MPI_Finalize records added at the ranks' first and last events "
                 "(the archive has none)\n", s.synthesized);
  for (const auto& [kind, n] : s.skipped)
    std::fprintf(stderr, "mstep: skipped %llu %s\n", static_cast<unsigned long long>(n), kind.c_str());
  std::printf("mstep: wrote %s: %d ranks, %llu records from %s%s\n", o.out.c_str(), s.ranks,
              static_cast<unsigned long long>(s.records), anchor.c_str(),
              s.creator.empty() ? "" : fmt::format(" (written by {})", s.creator).c_str());
  return 0;
}

}  // namespace

void add_import(CLI::App& app) {
  auto o = std::make_shared<ImportOptions>();
  auto* cmd = app.add_subcommand("import", "Turn another tool's trace into an mstep trace (--otf2: Score-P, EZTrace 2)");
  cmd->add_option("--otf2", o->otf2, "OTF2 archive: its .otf2 anchor file, or the directory holding it")->required();
  cmd->add_option("-o,--output", o->out, "Trace directory to write")->required();
  cmd->add_flag("-f,--force", o->force, "Overwrite an existing trace directory");
  cmd->add_flag("--keep-clocks", o->keep_clocks,
                "Take the archive's timestamps as they are, even where its ranks' clocks disagree (by default they "
                "are aligned at the collectives of all ranks)");
  cmd->callback([o] {
    if (const int code = run_import(*o)) throw CLI::RuntimeError(code);
  });
}

}  // namespace mstep::cli
