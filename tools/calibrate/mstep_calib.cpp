// mstep_calib: the MPI benchmark behind `mstep calibrate`. Measures the LogGPS parameters between
// two ranks (Netgauge's PRTT method, MODELS.md section 3), the BSPWB/MPM g and L of the five
// patterns of Roda et al. with all ranks (section 2), the two-regime linear model (section 5) and
// the broadcast inputs per pair of ranks (section 4), and writes the JSON parameter file.
//
//   mpiexec -n 2 mstep_calib --output params.json [--quick] [--max-size BYTES]
//   mpiexec -n 2 mstep_calib --collectives-only --output times.json [--quick]
// The second measures the collectives' loops alone (their sizes as in the first) and writes
// {"format": "mstep-calib-collectives", "collectives": {"MPI_Bcast": {"bytes": [...],
// "measured_s": [...]}, ...}}: `mstep calibrate` runs it under libmstep, with and without its
// substitute collectives, for CollectiveTimes::substitute_s.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/environment.hpp"
#include "model/analysis/speed_check.hpp"
#include "model/params/params.hpp"
#include "model/replay/collective_charge.hpp"
#include "tools/calibrate/collectives.hpp"
#include "tools/calibrate/mpi_util.hpp"
#include "tools/calibrate/cold_start.hpp"
#include "tools/calibrate/fits_to_params.hpp"
#include "tools/calibrate/patterns.hpp"
#include "tools/calibrate/pt2pt.hpp"

extern char** environ;

namespace mstep::calib {
namespace {

struct Options {
  std::string output;
  std::string phase_file;  // rank 0 names the phase it is in there, for mstep calibrate's watchdog
  bool quick = false;
  std::uint64_t max_size = 4u << 20;
  std::uint64_t bcast_bytes = 8;
  bool pin = true;
  bool progress = true;
  bool collectives_only = false;
  bool self_probe_only = false;  // with collectives_only: the probe alone
  std::vector<std::uint64_t> collective_sizes;  // with collectives_only: the sizes (empty: CollectiveOptions')
};

// 1, 2, 3, 4, 6, 8, 12, ... (powers of two and the points half-way in between on a log scale),
// or powers of two only.
std::vector<std::uint64_t> size_grid(std::uint64_t max, bool dense) {
  std::vector<std::uint64_t> v{1};
  for (std::uint64_t p = 2; p <= max; p *= 2) {
    if (dense && p >= 4) v.push_back(p / 4 * 3);
    v.push_back(p);
  }
  return v;
}

// The phase rank 0 is in, for the watchdog of `mstep calibrate` (a rank stuck elsewhere holds
// rank 0 in the next collective, so rank 0's phase names where the run stopped). The test hook
// MSTEP_CALIB_STALL=<phase> makes rank 0 stop there, so that the watchdog can be tested.
void enter_phase(const Options& o, int rank, const char* phase) {
  if (rank != 0 || o.phase_file.empty()) return;
  if (std::FILE* f = std::fopen(o.phase_file.c_str(), "w")) {
    std::fputs(phase, f);
    std::fclose(f);
  }
  if (const char* stall = std::getenv("MSTEP_CALIB_STALL"); stall && std::strcmp(stall, phase) == 0)
    for (;;) ::pause();
}

std::string utc_now() {
  char text[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

// A collective that moves nothing, per call: one int summed on MPI_COMM_SELF (MPICH copies it), the
// fastest of 5 loops of 2000 calls. Under libmstep less native, the recorder's own cost per call.
double self_allreduce_s() {
  int in = 1, out = 0;
  double best = 1e9;
  for (int round = 0; round < 5; ++round) {
    const double t0 = now();
    for (int k = 0; k < 2000; ++k) MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    best = std::min(best, (now() - t0) / 2000);
  }
  return best;
}

// --collectives-only: the loops of measure_collectives between ranks 0 and 1, three rounds each
// even when quick (mstep calibrate compares such runs), no exchanges; then rank 0's
// self_allreduce_s. --self-probe-only: that alone.
int collectives_only(const Options& o, int rank, bool in_pair) {
  std::vector<char> sb(2u << 20, 'm'), rb(sb.size(), 0);
  model::CollectiveTable colls;
  double self_s = 0;
  {
    const Comm pair = Comm::split(MPI_COMM_WORLD, in_pair ? 0 : -1, rank == 0 ? 0 : 1);
    enter_phase(o, rank, "collectives");
    if (pair && !o.self_probe_only) {
      CollectiveOptions co;
      co.exchanges = false;
      if (!o.collective_sizes.empty()) co.sizes = o.collective_sizes;
      if (o.quick) co.loop_budget = 1e-3, co.isolated_budget = 2e-3;
      colls = measure_collectives(pair, sb, rb, co);
    }
    if (rank == 0) self_s = self_allreduce_s();
    sleepy_barrier(MPI_COMM_WORLD);
  }
  enter_phase(o, rank, "fit and write");
  if (rank == 0) {
    nlohmann::ordered_json j{{"format", "mstep-calib-collectives"},
                             {"self_allreduce_s", self_s},
                             {"collectives", nlohmann::ordered_json::object()}};
    for (const auto& [op, t] : colls) {
      auto& entry = j["collectives"][std::string(mpi_name(op))];
      entry = nlohmann::ordered_json{{"bytes", t.bytes}, {"measured_s", t.measured_s}};
      if (t.isolated_gap_s > 0)
        entry["isolated"] = nlohmann::ordered_json{{"gap_s", t.isolated_gap_s}, {"measured_s", t.isolated_measured_s}};
    }
    const std::string text = j.dump(2) + "\n";
    std::FILE* f = std::fopen(o.output.c_str(), "w");
    bool written = f != nullptr;
    if (f) {
      written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
      written = std::fclose(f) == 0 && written;
    }
    if (!written) {
      std::fprintf(stderr, "mstep_calib: cannot write %s: %s\n", o.output.c_str(), std::strerror(errno));
      return 1;
    }
  }
  enter_phase(o, rank, "finalize");
  return 0;
}

int run(int argc, char** argv) {
  Options o;
  CLI::App app{"mstep_calib: measure LogGPS, BSPWB/MPM, linear and broadcast parameters (run under mpiexec)"};
  app.add_option("-o,--output", o.output, "Parameter file to write (JSON)")->required();
  app.add_flag("--quick", o.quick, "Short mode: fewer sizes and repetitions (a few seconds)");
  app.add_option("--max-size", o.max_size, "Largest message size, bytes")->check(CLI::Range(1024, 1 << 30));
  app.add_option("--bcast-bytes", o.bcast_bytes, "Message size of the broadcast inputs, bytes")->check(CLI::Range(0, 1 << 24));
  app.add_flag("!--no-pin", o.pin, "Do not pin ranks to CPUs");
  app.add_flag("!--quiet", o.progress, "No progress lines");
  app.add_option("--phase-file", o.phase_file, "File in which rank 0 names the phase it is in");
  app.add_flag("--collectives-only", o.collectives_only,
               "Measure the collectives' loops between ranks 0 and 1 alone and write their times");
  app.add_flag("--self-probe-only", o.self_probe_only,
               "With --collectives-only: only a one-int MPI_Allreduce on MPI_COMM_SELF, per call")
      ->needs("--collectives-only");
  app.add_option("--sizes", o.collective_sizes,
                 "With --collectives-only: the sizes to time, ascending, comma-separated (mstep calibrate passes "
                 "its own run's, around S)")
      ->delimiter(',')
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 20))
      ->needs("--collectives-only");
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) return app.exit(e);
    return e.get_exit_code();
  }
  if (size < 2) {
    if (rank == 0) std::fprintf(stderr, "mstep_calib: needs at least 2 processes, got %d (mpiexec -n 2 ...)\n", size);
    return 2;
  }
  if (o.quick && !app.count("--max-size")) o.max_size = 2u << 20;
  const double start = now();

  const std::vector<std::string> hosts = allgather_strings(processor_name(), MPI_COMM_WORLD);
  // The pair for the point-to-point parameters: rank 0 and the first rank on another host (the
  // network is what a cluster's parameters are about), else rank 1.
  int partner = 1;
  for (int r = 1; r < size; ++r)
    if (hosts[static_cast<std::size_t>(r)] != hosts[0]) {
      partner = r;
      break;
    }
  const bool in_pair = rank == 0 || rank == partner;

  // One CPU per rank where a host has enough; where it has not, at least the measuring pair.
  std::string pinning;
  int oversubscribed = 0;
  {
    const Comm node = Comm::split_shared(MPI_COMM_WORLD);
    const int cpus = allowed_cpus();
    int slot = node.rank();
    if (node.size() > cpus) {
      oversubscribed = 1;
      std::vector<int> pair_flags(static_cast<std::size_t>(node.size()));
      int mine = in_pair ? 1 : 0;
      MPI_Allgather(&mine, 1, MPI_INT, pair_flags.data(), 1, MPI_INT, node.get());
      slot = -1;
      if (in_pair) slot = static_cast<int>(std::count(pair_flags.begin(), pair_flags.begin() + node.rank(), 1));
    }
    const int pinned = o.pin && !pin_to_cpu(slot).empty() ? 1 : 0;
    int counts[2] = {pinned, 1}, totals[2] = {0, 0}, any_over = 0;
    MPI_Reduce(counts, totals, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&oversubscribed, &any_over, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    oversubscribed = any_over;
    if (rank == 0)
      pinning = totals[0] == totals[1] ? "ranks pinned one per CPU"
                                       : fmt::format("{} of {} ranks pinned to a CPU of their own", totals[0], totals[1]);
  }

  if (o.collectives_only) return collectives_only(o, rank, in_pair);

  Pt2ptOptions po;
  po.sizes = size_grid(o.max_size, !o.quick);
  po.progress = o.progress;
  PatternOptions pa;
  pa.progress = o.progress;
  BroadcastOptions bo;
  bo.bytes = o.bcast_bytes;
  if (o.quick) {
    po.rounds_min = po.rounds_max = 3, po.budget = 4, po.size_round_budget = 1e-3, po.reps_max = 8;
    po.late_reps = 5, po.warmup_max = 0.5;
    for (double h = 1024; h <= 1048576; h *= 4) pa.h.push_back(h);
    pa.rounds = 1, pa.reps = 5, pa.budget = 2;
    bo.reps = 10;
  } else {
    for (double h = 1024; h <= 4194304; h *= 2) pa.h.push_back(h);
  }
  // The patterns round message sizes up by less than a byte per destination: 64 KiB to spare.
  std::vector<char> sb(std::max<std::uint64_t>(o.max_size, 4194304) + 65536, 'm'), rb(sb.size(), 0);

  Pt2ptResult pt;
  model::CollectiveTable colls;
  ColdStartSamples cold, cold_small;
  double fresh_per_byte = 0;
  std::vector<std::pair<std::string, double>> probes;
  {
    const Comm pair = Comm::split(MPI_COMM_WORLD, in_pair ? 0 : -1, rank == 0 ? 0 : 1);
    if (rank == 0 && o.progress)
      std::fprintf(stderr, "mstep_calib: %d ranks on %s; point-to-point between ranks 0 and %d, %zu sizes, 1 B..%llu B\n",
                   size, hosts[0].c_str(), partner, po.sizes.size(), static_cast<unsigned long long>(o.max_size));
    // First, while the pair's channel is fresh: the cold start (the probe comes after it).
    enter_phase(o, rank, "cold start");
    if (pair) {
      cold_small = measure_cold_start(pair, sb.data(), rb.data(), kColdSmallBytes, 128);
      cold = measure_cold_start(pair, sb.data(), rb.data(), kColdStartBytes, o.quick ? 256 : 512);
    }
    // The machine's period at each end of the phases (model::mixed_periods).
    auto probe = [&](const char* at) {
      if (pair) probes.emplace_back(at, probe_half_rtt_8B(pair, sb, rb));
    };
    probe("start");
    enter_phase(o, rank, "point-to-point");
    if (pair) pt = measure_pt2pt(pair, sb, rb, po);
    enter_phase(o, rank, "fresh buffers");
    if (pair) fresh_per_byte = measure_fresh_per_byte(pair, {1u << 20, 4u << 20}, o.quick ? 3 : 5);
    probe("after point-to-point");
    enter_phase(o, rank, "collectives");
    if (pair) {
      CollectiveOptions co;
      if (o.quick) co.rounds = 1, co.loop_budget = 5e-4, co.isolated_budget = 2e-3;
      // The sizes around S (the pair's first rank measured it): the eager one just below, the
      // synchronous ones from S on, for the collectives and the exchanges alike.
      std::uint64_t S = pt.S;
      MPI_Bcast(&S, 1, MPI_UINT64_T, 0, pair.get());
      co.sizes = sizes_around(S);
      colls = measure_collectives(pair, sb, rb, co);
    }
    probe("after collectives");
    sleepy_barrier(MPI_COMM_WORLD);
  }
  enter_phase(o, rank, "patterns");
  const PatternResult pat = measure_patterns(MPI_COMM_WORLD, sb, rb, pa);
  enter_phase(o, rank, "broadcast inputs");
  const BroadcastResult bc = measure_broadcast_inputs(MPI_COMM_WORLD, sb, rb, bo);
  if (rank == 0 && o.progress) std::fprintf(stderr, "mstep_calib: broadcast inputs done (%.1f s)\n", bc.seconds);

  enter_phase(o, rank, "fit and write");
  if (rank == 0) {
    model::CalibrationParams p = build_params(pt, pat, pa, bc, o.bcast_bytes, size);
    p.cold = cold_start_of(cold, cold_small, p);
    p.cold->fresh_per_byte = fresh_per_byte;
    if (p.loggps) p.cold->fresh_from = p.loggps->S;
    // The model's side of each measured collective: the LogGPS replay's charge for the same calls
    // (no cold start: the measured loops were warm).
    if (p.loggps) {
      for (auto& [op, t] : colls) {
        t.model_s.clear();
        for (const std::uint64_t m : t.bytes) t.model_s.push_back(model::collective_charge(*p.loggps, model::ColdStart{}, op, m));
        t.isolated_model_s.clear();
        if (t.isolated_gap_s > 0)
          for (const std::uint64_t m : t.bytes)
            t.isolated_model_s.push_back(model::collective_charge(*p.loggps, model::ColdStart{}, op, m, 16, t.isolated_gap_s));
      }
      p.collectives = std::move(colls);
    }
    p.meta.notes.push_back(fmt::format("fresh buffers: a rendezvous transfer into new memory costs {:.3f} ns/B more "
                                       "than into reused memory (1 and 4 MiB)", fresh_per_byte * 1e9));
    model::ParamsMeta& m = p.meta;
    m.source = fmt::format("mstep calibrate (mstep_calib {})", MSTEP_VERSION);
    m.host = hosts[0];
    for (const auto& h : hosts)
      if (std::find(m.hosts.begin(), m.hosts.end(), h) == m.hosts.end()) m.hosts.push_back(h);
    m.mpi_library = mpi_library();
    m.mpi_version = mpi_standard_version();
    m.date = utc_now();
    m.processes = static_cast<std::uint32_t>(size);
    m.pair = {0, partner};
    m.mode = o.quick ? "quick" : "full";
    m.half_rtt_8B = pt.half_rtt_8B;
    m.probes_8B = probes;
    if (auto mixed = model::mixed_periods(m)) p.warnings.push_back(std::move(*mixed));
    m.environment = mstep::mpi_environment();
    m.notes.push_back(pinning);
    if (oversubscribed)
      p.warnings.push_back("a host runs more ranks than it has CPUs: the pattern and broadcast times include time "
                           "slicing between busy-polling ranks");
    m.notes.push_back(fmt::format("point-to-point: {} rounds, {:.1f} s; patterns {:.1f} s; broadcast inputs {:.1f} s",
                                  pt.rounds, pt.seconds, pat.seconds, bc.seconds));
    m.notes.push_back("L is the half round trip of small messages minus 2 o (MODELS.md section 3), so L + 2 o "
                      "compares with half_rtt_8B");
    m.duration_s = now() - start;
    model::write_params(o.output, p);
  }
  enter_phase(o, rank, "finalize");
  return 0;
}

}  // namespace
}  // namespace mstep::calib

int main(int argc, char** argv) {
  mstep::calib::MpiSession mpi(argc, argv);
  try {
    return mstep::calib::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mstep_calib: %s\n", e.what());
    mstep::calib::MpiSession::abort(1);
  }
}
