// mstep params show: a parameter file (of mstep calibrate, or a preset) for people. mstep params
// list: several side by side, one line each, and which of them a run's period calls for.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/analysis/speed_check.hpp"
#include "model/params/params.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/output.hpp"
#include "tools/mstep/report_common.hpp"

namespace mstep::cli {

using model::CalibrationParams;

namespace {

// Seconds in the unit that reads best.
std::string time_text(double s) {
  if (!std::isfinite(s)) return "inf";
  const double a = std::abs(s);
  if (a == 0) return "0 s";
  if (a < 1e-6) return fmt::format("{:.1f} ns", s * 1e9);
  if (a < 1e-3) return fmt::format("{:.3f} us", s * 1e6);
  if (a < 1) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

// Seconds per byte, with the bandwidth it stands for.
std::string per_byte_text(double s) {
  if (!std::isfinite(s)) return "inf";
  if (s <= 0) return fmt::format("{:.4f} ns/B", s * 1e9);
  return fmt::format("{:.4f} ns/B  ({:.3g} GB/s)", s * 1e9, 1e-9 / s);
}

std::string bytes_text(std::uint64_t b) {
  if (b == model::kInfiniteBytes) return "infinite";
  if (b >= 1048576 && b % 1048576 == 0) return fmt::format("{} B ({} MiB)", b, b / 1048576);
  if (b >= 1024) return fmt::format("{} B ({:.4g} KiB)", b, static_cast<double>(b) / 1024);
  return fmt::format("{} B", b);
}

std::string bandwidth_text(double B) {
  if (!std::isfinite(B)) return "infinite";
  return fmt::format("{:.3g} GB/s", B / 1e9);
}

}  // namespace

// Also used by mstep calibrate for its summary.
void print_params(const CalibrationParams& p, const std::string& name) {
  const model::ParamsMeta& m = p.meta;
  fmt::print("mstep params: {}\n", name);
  if (!m.source.empty()) fmt::print("source: {}{}\n", m.source, m.date.empty() ? "" : ", " + m.date);
  if (!m.platform.empty()) fmt::print("platform: {}\n", m.platform);
  if (!m.host.empty() || m.processes > 0) {
    fmt::print("run: {} process{}", m.processes, m.processes == 1 ? "" : "es");
    if (!m.hosts.empty()) fmt::print(" on {}", fmt::join(m.hosts, ", "));
    if (!m.mode.empty()) fmt::print(", {} mode", m.mode);
    if (m.duration_s > 0) fmt::print(", {:.1f} s", m.duration_s);
    fmt::print("\n");
  }
  if (!m.mpi_library.empty()) fmt::print("MPI: {}{}\n", m.mpi_library, m.mpi_version.empty() ? "" : " (" + m.mpi_version + ")");
  if (!m.environment.empty()) {
    std::vector<std::string> env;
    for (const auto& [k, v] : m.environment) env.push_back(k + "=" + v);
    fmt::print("environment: {}\n", fmt::join(env, " "));
  }

  if (p.loggps) {
    const model::LogGPSParams& l = *p.loggps;
    fmt::print("\nLogGPS{}\n", m.pair.size() == 2 ? fmt::format(" (between ranks {} and {})", m.pair[0], m.pair[1]) : "");
    fmt::print("  L   latency                      {}\n", time_text(l.L));
    fmt::print("  o   overhead per message         {}\n", time_text(l.o));
    fmt::print("  Os  send overhead per byte       {}\n", per_byte_text(l.Os));
    fmt::print("  Or  receive overhead per byte    {}\n", per_byte_text(l.Or));
    fmt::print("  g   gap between messages         {}\n", time_text(l.g));
    fmt::print("  Gs  gap per byte below s         {}\n", per_byte_text(l.Gs));
    fmt::print("  Gl  gap per byte from s on       {}\n", per_byte_text(l.Gl));
    fmt::print("  s   short/eager boundary         {}\n", bytes_text(l.s));
    fmt::print("  S   synchronous sends from       {}{}\n", bytes_text(l.S),
               m.S_fit != model::kInfiniteBytes ? fmt::format("  (half round trip jumps at {} B)", m.S_fit) : "");
    fmt::print("  P   processes                    {}\n", l.P);
    if (l.H != 0 || l.rendezvous_model == model::RendezvousModel::Delivered)
      fmt::print("  H   rendezvous handshake         {}  (beyond T4 + T5's o + L + o)\n", time_text(l.H));
    if (l.rendezvous_model == model::RendezvousModel::Delivered)
      fmt::print("      rendezvous as calibrated: its bytes move once at Gl, MPI_Send returns when they are delivered,\n"
                 "      a request-to-send is answered only inside MPI{}\n",
                 l.rendezvous_push ? ", the data leaves only with its sender inside MPI" : "");
    if (m.half_rtt_8B > 0)
      fmt::print("  measured half round trip of 8 B: {}  (model: o + L + o = {})\n", time_text(m.half_rtt_8B),
                 time_text(2 * l.o + l.L));
  }
  if (p.cold) {
    const model::ColdStart& c = *p.cold;
    if (c.messages == 0)
      fmt::print("\nCold start: none measured (the first messages of a pair cost what later ones do)\n");
    else
      fmt::print("\nCold start (a pair's first {} messages of {} B up to {}, each direction; applied by the LogGP/LogGPS replays)\n"
                 "  send  extra overhead per message   {}\n  recv  extra overhead per message   {}\n",
                 c.messages, c.from, c.to == model::kInfiniteBytes ? std::string("any size") : fmt::format("{} B", c.to - 1),
                 time_text(c.send), time_text(c.recv));
  }

  if (p.mpm) {
    const model::MpmParams& mp = *p.mpm;
    fmt::print("\nBSPWB / MPM  T(h) = g h + L, h = in {} out\n", mp.combine == model::HCombine::Sum ? "+" : "max");
    fmt::print("  {:<16} {:>12} {:>12} {:>9}\n", "pattern", "g ns/B", "L", "residual");
    // Presets have no residuals (the paper gives none): a blank there.
    auto row = [&mp](const std::string& what, double g, double L, double r) {
      const std::string res = mp.h.empty() && r == 0 ? "" : fmt::format("{:.0f}%", 100 * r);
      fmt::print("  {:<16} {:>12.4f} {:>12} {:>9}\n", what, g * 1e9, time_text(L), res);
    };
    row("all (average)", mp.g, mp.L, mp.residual);
    for (const auto& pt : mp.patterns) row(pt.name, pt.g, pt.L, pt.residual);
    if (!mp.h.empty())
      fmt::print("  h from {} to {} bytes, {} values\n", mp.h.front(), mp.h.back(), mp.h.size());
  }

  if (p.linear) {
    const auto& lm = p.linear->model;
    fmt::print("\nLinear  T(n) = T0 + n/B\n");
    if (lm.boundary == model::kInfiniteBytes) {
      fmt::print("  all sizes:        T0 = {}, B = {}\n", time_text(lm.below.T0), bandwidth_text(lm.below.B));
    } else {
      fmt::print("  below {:>10} B: T0 = {}, B = {}  (residual {:.0f}%)\n", lm.boundary, time_text(lm.below.T0),
                 bandwidth_text(lm.below.B), 100 * p.linear->residual_below);
      fmt::print("  from  {:>10} B: T0 = {}, B = {}  (residual {:.0f}%)\n", lm.boundary, time_text(lm.above.T0),
                 bandwidth_text(lm.above.B), 100 * p.linear->residual_above);
    }
  }

  if (!p.collectives.empty()) {
    // Per operation and size: measured / the LogGPS replay's messages alone; the replays add
    // the difference to every call (the isolated row's to a call after computation).
    bool substitutes = false;
    for (const auto& [op, t] : p.collectives) substitutes = substitutes || !t.substitute_s.empty();
    fmt::print("\nCollectives and the exchange (MPI_Sendrecv; MPI_Waitall: MPI_Irecv, MPI_Isend and MPI_Waitall) between the pair "
               "(per call: measured / messages alone{}; the LogGP/LogGPS replays add the difference)\n",
               substitutes ? ", then libmstep's substitute as measured" : "");
    for (const auto& [op, t] : p.collectives) {
      fmt::print("  {:<26}", op == Op::Waitall ? std::string("MPI_Waitall (Irecv+Isend)") : std::string(mpi_name(op)));
      for (std::size_t i = 0; i < t.bytes.size(); ++i) {
        fmt::print(" {} B: {} / {}", t.bytes[i], time_text(t.measured_s[i]), time_text(t.model_s[i]));
        if (!t.substitute_s.empty()) fmt::print(", {}", time_text(t.substitute_s[i]));
        fmt::print(";");
      }
      fmt::print("\n");
      if (t.has_isolated()) {
        fmt::print("  {:<26}", fmt::format("  isolated ({} before)", time_text(t.isolated_gap_s)));
        for (std::size_t i = 0; i < t.bytes.size(); ++i)
        {
          fmt::print(" {} B: {} / {}", t.bytes[i], time_text(t.isolated_measured_s[i]), time_text(t.isolated_model_s[i]));
          if (t.has_substitute_isolated()) fmt::print(", {}", time_text(t.substitute_isolated_s[i]));
          fmt::print(";");
        }
        fmt::print("\n");
      }
    }
  }

  if (p.broadcast) {
    const auto& n = p.broadcast->network;
    fmt::print("\nBroadcast inputs ({}-byte messages): latency lambda / injection time per pair\n", p.broadcast->bytes);
    if (n.nodes <= 8) {
      fmt::print("  {:>6}", "from\\to");
      for (std::size_t v = 0; v < n.nodes; ++v) fmt::print(" {:>21}", v);
      fmt::print("\n");
      for (std::size_t u = 0; u < n.nodes; ++u) {
        fmt::print("  {:>7}", u);
        for (std::size_t v = 0; v < n.nodes; ++v)
          fmt::print(" {:>21}", u == v ? "-" : time_text(n.w(u, v)) + " / " + time_text(n.D(u, v)));
        fmt::print("\n");
      }
    } else {
      std::vector<double> w, d;
      for (std::size_t u = 0; u < n.nodes; ++u)
        for (std::size_t v = 0; v < n.nodes; ++v)
          if (u != v) w.push_back(n.w(u, v)), d.push_back(n.D(u, v));
      std::sort(w.begin(), w.end());
      std::sort(d.begin(), d.end());
      fmt::print("  {} ranks; lambda min {} median {} max {}; injection min {} median {} max {}\n", n.nodes,
                 time_text(w.front()), time_text(w[w.size() / 2]), time_text(w.back()), time_text(d.front()),
                 time_text(d[d.size() / 2]), time_text(d.back()));
    }
  }

  if (!m.notes.empty()) {
    fmt::print("\nNotes:\n");
    for (const auto& x : m.notes) fmt::print("  - {}\n", x);
  }
  if (!p.warnings.empty()) {
    fmt::print("\nWarnings:\n");
    for (const auto& x : p.warnings) fmt::print("  - {}\n", x);
  }
}

namespace {

// The network a file was calibrated on, as its environment says: UCX_TLS (the transport) and
// UCX_RNDV_THRESH (S), "default" where neither was set, "-" for a preset without the record.
std::string network_text(const model::ParamsMeta& m) {
  if (m.source.empty() || m.source.rfind("mstep", 0) != 0) return "-";
  std::vector<std::string> set;
  for (const char* v : {"UCX_TLS", "UCX_RNDV_THRESH"})
    if (const auto it = m.environment.find(v); it != m.environment.end()) set.push_back(fmt::format("{}={}", v, it->second));
  return set.empty() ? std::string("default") : fmt::format("{}", fmt::join(set, " "));
}

void list_params(const std::vector<std::string>& given, const std::string& trace_dir) {
  const std::vector<ParamsFile> files = read_params_given(given, {});
  std::optional<ChosenParams> chosen;
  std::string run_line;
  if (!trace_dir.empty()) {
    TraceDir trace;
    try {
      trace = load_trace_dir(trace_dir, std::nullopt, {}, /*metadata_only=*/true);
    } catch (const TraceError& e) {
      fail(1, e.what());
    }
    chosen = choose_params(files, trace);
    if (chosen->choice.empty())  // one file: no choice, but whether the run is in its period
      if (const auto diff = model::run_speed_difference(
              model::probed_latency(trace, model::calibrated_on_one_host(files[0].params)), files[0].params))
        run_line = "warning: " + *diff;
  }
  std::size_t width = 4;
  for (const ParamsFile& f : files) width = std::max(width, f.file.size());
  fmt::print("  {:<{}} {:<20} {:<5} {:<26} {:>11} {:>9} {:>9} {:>9} {:>9}\n", "file", width, "date", "mode", "network",
             "8 B half rt", "L", "o", "g", "S");
  for (std::size_t i = 0; i < files.size(); ++i) {
    const CalibrationParams& p = files[i].params;
    const auto& l = p.loggps;
    auto t = [](double s) { return s != 0 ? time_text(s) : std::string("-"); };
    fmt::print("{} {:<{}} {:<20} {:<5} {:<26} {:>11} {:>9} {:>9} {:>9} {:>9}\n",
               chosen && chosen->index == i ? "*" : " ", files[i].file, width, p.meta.date.empty() ? "-" : p.meta.date,
               p.meta.mode.empty() ? "-" : p.meta.mode, network_text(p.meta), t(p.meta.half_rtt_8B),
               l ? t(l->L) : "-", l ? t(l->o) : "-", l ? t(l->g) : "-",
               !l ? std::string("-") : l->S == model::kInfiniteBytes ? std::string("inf") : fmt::format("{} B", l->S));
  }
  // A calibration whose phases ran in different periods (model::mixed_periods), said under the table.
  for (const ParamsFile& f : files)
    if (const auto mixed = model::mixed_periods(f.params.meta))
      fmt::print("note: {}: {}; the period choice takes it only where no other file is in the run's period\n",
                 f.file, *mixed);
  if (chosen) {
    fmt::print("{}: {} (*){}\n", trace_dir,
               chosen->choice.empty() ? "the one file given" : chosen->choice, run_line.empty() ? "" : "; " + run_line);
  }
}

}  // namespace

void add_params(CLI::App& app) {
  struct Options {
    std::string file;
    std::string format = "text";
  };
  auto o = std::make_shared<Options>();
  auto* params = app.add_subcommand("params", "Parameter files of mstep calibrate and the presets");
  params->require_subcommand(1);
  auto* show = params->add_subcommand("show", "Print a parameter file for people (or checked JSON)");
  show->add_option("file", o->file, "Parameter file (JSON)")->required();
  add_format_option(*show, o->format);
  show->callback([o] {
    CalibrationParams p;
    try {
      p = model::read_params(o->file);
    } catch (const model::ParamsError& e) {
      std::fprintf(stderr, "mstep: %s\n", e.what());
      throw CLI::RuntimeError(2);
    }
    if (o->format == "json") fmt::print("{}", model::params_to_json(p));
    else print_params(p, o->file);
  });
  struct ListOptions {
    std::vector<std::string> files;
    std::string trace;
  };
  auto lo = std::make_shared<ListOptions>();
  auto* list = params->add_subcommand(
      "list", "Several parameter files side by side (a directory: its *.json), and which one a run's period calls for");
  list->add_option("files", lo->files, "Parameter files, or directories of them")->required();
  list->add_option("--trace", lo->trace,
                   "A trace directory: mark (*) the file report, whatif and advise would use for it, and say why");
  list->footer("Example: mstep params list cals/ --trace run1");
  list->callback([lo] { list_params(lo->files, lo->trace); });
}

}  // namespace mstep::cli
