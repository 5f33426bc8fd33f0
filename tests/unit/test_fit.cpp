// Calibration fits (model/params/fit.hpp) on synthetic timings with known parameters and noise, and the
// parameter file (model/params/params.hpp): round trip and one-line errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "model/params/fit.hpp"
#include "model/params/params.hpp"

using namespace mstep::model;

namespace {

// The size grid of mstep_calib: 1, 2, 3, 4, 6, 8, 12, ..., 3 MiB, 4 MiB.
std::vector<std::uint64_t> size_grid(std::uint64_t max = 4u << 20) {
  std::vector<std::uint64_t> v{1};
  for (std::uint64_t p = 2; p <= max; p *= 2) {
    if (p >= 4 && p / 4 * 3 > v.back()) v.push_back(p / 4 * 3);
    v.push_back(p);
  }
  return v;
}

// Multiplicative noise: a median of repeated timings, relative scatter `rel`, and every
// `spike_every`-th point stretched by 60% (a descheduled process that the median did not hide).
struct Noise {
  std::mt19937 rng{12345};
  double rel = 0.03;
  int spike_every = 0;
  int count = 0;
  double operator()(double v) {
    std::normal_distribution<double> d(0.0, rel);
    double f = 1 + d(rng);
    if (spike_every > 0 && ++count % spike_every == 0) f *= 1.6;
    return v * f;
  }
};

// PRTT-style curves of a LogGPS machine, as MODELS.md section 3 has them for a ping-pong whose
// receiver is always ready (T4 = o + L + o), and a train whose synchronous sends each wait for
// the clear-to-send (a delivered rendezvous: each send of the train lasts its whole send_time).
std::vector<PrttPoint> synthetic_curves(const LogGPSParams& p, Noise& noise) {
  const LogGPS m{p};
  std::vector<PrttPoint> out;
  for (std::uint64_t k : size_grid()) {
    const double kb = static_cast<double>(k);
    PrttPoint pt;
    pt.bytes = k;
    pt.half_rtt = noise(m.end_to_end(k, 0.0, -1.0));
    const double per_byte = k < p.s ? kb * p.Gs
                                    : static_cast<double>(p.s) * p.Gs + (kb - static_cast<double>(p.s)) * p.Gl;
    pt.gap = noise(m.rendezvous(k) && p.rendezvous_model == RendezvousModel::Delivered ? m.send_time(k, 0.0, -1.0)
                   : p.g + per_byte + (m.rendezvous(k) ? m.T5() + 2 * p.o + p.L : 0.0));
    pt.send_overhead = noise(m.send_time(k, 0.0, -1.0));
    pt.recv_overhead = noise(m.rendezvous(k) ? m.end_to_end(k, 0.0, -1.0) : m.T3(k));
    out.push_back(pt);
  }
  return out;
}

LogGPSParams machine() {
  LogGPSParams p;
  p.L = 1.0e-6;
  p.o = 0.3e-6;
  p.Os = 0.05e-9;
  p.Or = 0.10e-9;
  p.g = 0.20e-6;
  p.Gs = 2.0e-9;   // short messages: 2 ns per byte
  p.Gl = 0.1e-9;   // long ones: 10 GB/s
  p.s = 1024;
  p.S = 12289;
  p.H = 5.0e-6;    // the handshake beyond o + L + o, and the rendezvous measured here
  p.rendezvous_model = RendezvousModel::Delivered;
  p.rendezvous_push = true;
  return p;
}

}  // namespace

TEST_CASE("Median and robust summary", "[fit]") {
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(std::isnan(median({})));
  const std::vector<double> t{1.00, 1.01, 0.99, 1.02, 0.98, 1.00, 9.0, 12.0};
  const RobustSummary s = robust_summary(t);
  CHECK(s.samples == 8);
  CHECK(s.kept == 6);  // the two stretched samples go
  CHECK(s.median == Approx(1.0));
  CHECK(s.relative_error() < 0.02);
  SECTION("most samples stretched by lost time slices") {
    // 3 clean ping-pongs of ~1 us among 7 that waited for a descheduled partner.
    const std::vector<double> busy{5e-3, 1.0e-6, 4e-3, 6e-3, 1.1e-6, 5e-3, 0.9e-6, 7e-3, 4e-3, 5e-3};
    const RobustSummary b = robust_summary(busy);
    CHECK(b.kept == 3);
    CHECK(b.median == Approx(1.0e-6));
  }
}

TEST_CASE("Weighted lines", "[fit]") {
  const std::vector<XY> exact{{0, 2e-6}, {1000, 3e-6}, {4000, 6e-6}, {1e6, 1.002e-3}};
  for (Weighting w : {Weighting::Absolute, Weighting::Relative}) {
    const LineFit f = fit_line_weighted(exact, w);
    CHECK(f.intercept == Approx(2e-6));
    CHECK(f.slope == Approx(1e-9));
    CHECK(f.rel_rms == Approx(0).margin(1e-12));
  }
  SECTION("relative weights keep the small sizes") {
    // A 10% error at the largest size pulls ordinary least squares' intercept off by 100 us
    // times a small lever; the relative fit stays near the small-size values.
    std::vector<XY> pts = exact;
    pts.back().y *= 1.1;
    CHECK(std::abs(fit_line_weighted(pts, Weighting::Absolute).intercept - 2e-6) > 0.1e-6);
    CHECK(fit_line_weighted(pts, Weighting::Relative).intercept == Approx(2e-6).epsilon(0.05));
  }
  SECTION("one point or one x: a flat line") {
    const LineFit f = fit_line_weighted(std::vector<XY>{{5, 2}, {5, 4}}, Weighting::Absolute);
    CHECK(f.slope == 0);
    CHECK(f.intercept == 3);
  }
  CHECK_THROWS_AS(fit_line_weighted(std::vector<XY>{}), std::invalid_argument);
  CHECK_THROWS_AS(fit_line_weighted(std::vector<XY>{{1, 0}, {2, 1}}), std::invalid_argument);
}

TEST_CASE("A robust line drops a stretched point", "[fit]") {
  std::vector<XY> pts;
  for (int i = 1; i <= 10; ++i) pts.push_back({i * 1000.0, 1e-6 + i * 1000 * 1e-9});
  pts[4].y *= 2;  // descheduled
  const RobustLineFit r = fit_line_robust(pts);
  CHECK(r.outlier[4]);
  CHECK(std::count(r.outlier.begin(), r.outlier.end(), true) == 1);
  CHECK(r.fit.intercept == Approx(1e-6).epsilon(1e-6));
  CHECK(r.fit.slope == Approx(1e-9).epsilon(1e-6));
}

TEST_CASE("Boundaries where the points leave the fit", "[fit]") {
  Noise noise;
  noise.rel = 0.03;
  SECTION("a jump (eager to rendezvous) is found at the first size above it") {
    std::vector<XY> pts;
    for (std::uint64_t k : size_grid()) {
      const double kb = static_cast<double>(k);
      pts.push_back({kb, noise(k < 12289 ? 0.5e-6 + kb * 0.1e-9 : 5e-6 + kb * 0.1e-9)});
    }
    const auto segs = segment_curve(pts);
    REQUIRE(segs.size() == 2);
    CHECK(pts[segs[1].begin].x == 16384);  // the first grid size >= 12289
    CHECK(segs[1].fit.slope == Approx(0.1e-9).epsilon(0.05));
    CHECK(segs[0].fit.intercept == Approx(0.5e-6).epsilon(0.05));
  }
  SECTION("a change of slope is moved back to where it happened") {
    std::vector<XY> pts;
    for (std::uint64_t k : size_grid(1u << 20)) {
      const double kb = static_cast<double>(k);
      const double t = k < 4096 ? 1e-6 + kb * 4e-9 : 1e-6 + 4096 * 4e-9 + (kb - 4096) * 0.25e-9;
      pts.push_back({kb, noise(t)});
    }
    const auto segs = segment_curve(pts);
    REQUIRE(segs.size() >= 2);
    const double boundary = pts[segs[1].begin].x;
    CHECK(boundary >= 4096);
    CHECK(boundary <= 8192);
    CHECK(segs.back().fit.slope == Approx(0.25e-9).epsilon(0.1));
  }
  SECTION("lone stretched points are outliers, not boundaries") {
    std::vector<XY> pts;
    for (std::uint64_t k : size_grid(1u << 20)) pts.push_back({static_cast<double>(k), 1e-6 + static_cast<double>(k) * 1e-10});
    pts[10].y *= 1.8;
    pts[20].y *= 1.5;
    const auto segs = segment_curve(pts);
    REQUIRE(segs.size() == 1);
    CHECK(segs[0].outliers == std::vector<std::size_t>{10, 20});
    CHECK(segs[0].fit.intercept == Approx(1e-6));
  }
  SECTION("too few points: one segment") {
    CHECK(segment_curve(std::vector<XY>{{1, 1}, {2, 5}}).size() == 1);
    CHECK(segment_curve(std::vector<XY>{}).empty());
  }
}

TEST_CASE("The synchronous boundary of a late-receiver sweep", "[fit]") {
  using B = std::vector<bool>;
  CHECK(synchronous_from(B{false, false, true, true}) == 2);
  CHECK(synchronous_from(B{false, true, false, true}) == 3);  // a lone early one does not count
  CHECK(synchronous_from(B{false, false}) == 2);               // none
  CHECK(synchronous_from(B{true, true}) == 0);
  CHECK(synchronous_from(B{false, false, true}) == 2);         // only the largest size waits
  // One size that did not wait in a run of waiting ones (the sender lost its CPU between the
  // announcement and the send): the boundary stays where the run starts.
  CHECK(synchronous_from(B{false, false, true, true, true, false, true, true}) == 2);
  // One size that waited among eager ones: ignored.
  CHECK(synchronous_from(B{false, false, true, false, false, true, true, true}) == 5);
  CHECK(synchronous_from(B{}) == 0);
}

TEST_CASE("LogGPS parameters recovered from noisy PRTT curves", "[fit]") {
  const LogGPSParams truth = machine();
  // Medians of many repetitions scatter by 1-2% on a quiet machine; every 11th point is also
  // stretched by 60%, as if a descheduled process had survived the median.
  for (double rel : {0.0, 0.01, 0.02}) {
    DYNAMIC_SECTION("relative noise " << rel) {
      Noise noise;
      noise.rel = rel;
      noise.spike_every = rel > 0 ? 11 : 0;
      const auto pts = synthetic_curves(truth, noise);
      const LoggpsFit fit = derive_loggps(pts, truth.S);
      const LogGPSParams& p = fit.params;
      // Tolerances: 2% without noise (the fits are exact, the boundaries are grid points), else
      // 5% for what the model's predictions depend on most (L, o, g, G, the end-to-end time)
      // and 25% for the per-byte overheads, which are small next to microsecond latencies.
      const double tol = rel == 0 ? 0.02 : 0.05;
      CHECK(p.S == truth.S);
      CHECK(fit.S_fit == 16384);  // the first grid size at or above S = 12289
      CHECK(p.s >= 1024);         // the change of slope at 1 KiB, found within one grid step
      CHECK(p.s <= 1536);
      CHECK(p.L == Approx(truth.L).epsilon(tol));
      CHECK(p.o == Approx(truth.o).epsilon(tol));
      CHECK(p.g == Approx(truth.g).epsilon(tol));
      CHECK(p.Gs == Approx(truth.Gs).epsilon(tol));
      CHECK(p.Gl == Approx(truth.Gl).epsilon(tol));
      CHECK(p.Os == Approx(truth.Os).epsilon(rel == 0 ? tol : 0.25));
      CHECK(p.Or == Approx(truth.Or).epsilon(rel == 0 ? tol : 0.25));
      CHECK(p.rendezvous_model == RendezvousModel::Delivered);
      CHECK(p.H == Approx(truth.H).epsilon(rel == 0 ? tol : 0.25));
      // ... and the rendezvous ping-pong: at S's grid size and at 256 KiB.
      for (std::uint64_t k : {16384u, 262144u})
        CHECK(LogGPS{p}.end_to_end(k, 0, -1) == Approx(LogGPS{truth}.end_to_end(k, 0, -1)).epsilon(tol));
      // The model reproduces the small-message half round trip it was fitted to.
      CHECK(LogGPS{p}.end_to_end(8, 0, -1) == Approx(LogGPS{truth}.end_to_end(8, 0, -1)).epsilon(tol));
      if (rel == 0) CHECK(fit.warnings.empty());
    }
  }
  SECTION("a TCP-like machine: no short range below S (s = S), a 25 us handshake beyond o + L + o") {
    // UCX over TCP as calibrated here: L 2.2 us, o 2.4 us, eager up to 8 KiB, then a rendezvous whose
    // half round trip starts some 25 us above T4 + T5 + T1 + T2 + T3's and grows at Gl.
    LogGPSParams tcp;
    tcp.L = 2.2e-6, tcp.o = 2.4e-6, tcp.Os = 0.5e-9, tcp.Or = 0.02e-9, tcp.g = 5.6e-6;
    tcp.Gs = 0.5e-9, tcp.Gl = 0.3e-9, tcp.s = 8192, tcp.S = 8192, tcp.H = 25e-6;
    tcp.rendezvous_model = RendezvousModel::Delivered;
    Noise noise;
    noise.rel = 0.01;
    const LoggpsFit fit = derive_loggps(synthetic_curves(tcp, noise), tcp.S);
    CHECK(fit.params.H == Approx(25e-6).epsilon(0.05));
    CHECK(fit.params.Gl == Approx(0.3e-9).epsilon(0.05));
    // Every rendezvous byte at Gl (s = S: no s Gs term): 8 KiB and 16 KiB as the machine has them.
    for (std::uint64_t k : {8192u, 16384u})
      CHECK(LogGPS{fit.params}.end_to_end(k, 0, -1) == Approx(LogGPS{tcp}.end_to_end(k, 0, -1)).epsilon(0.03));
  }
  SECTION("5% noise: the large-message and overhead parameters still hold") {
    Noise noise;
    noise.rel = 0.05;
    noise.spike_every = 11;
    const LoggpsFit fit = derive_loggps(synthetic_curves(truth, noise), truth.S);
    CHECK(fit.params.S == truth.S);
    CHECK(fit.params.o == Approx(truth.o).epsilon(0.05));
    CHECK(fit.params.Gl == Approx(truth.Gl).epsilon(0.10));
    CHECK(fit.params.L == Approx(truth.L).epsilon(0.40));
  }
  SECTION("no synchronous size: S stays infinite") {
    Noise noise;
    LogGPSParams p = truth;
    p.S = kInfiniteBytes;
    const LoggpsFit fit = derive_loggps(synthetic_curves(p, noise), kInfiniteBytes);
    CHECK(fit.params.S == kInfiniteBytes);
    CHECK(fit.params.Gl == Approx(truth.Gl).epsilon(0.2));
  }
  SECTION("a noisy curve gets a warning") {
    Noise noise;
    noise.rel = 0.25;
    const LoggpsFit fit = derive_loggps(synthetic_curves(truth, noise), truth.S);
    CHECK_FALSE(fit.warnings.empty());
  }
  SECTION("overheads that overlap the transfer: L is never negative and o + L + o keeps the half round trip") {
    // A fast period of shared memory: the time inside MPI_Send and MPI_Recv (o = 400 ns each) is
    // more than half the small-message half round trip (600 ns), so half RTT - 2o = -200 ns.
    LogGPSParams fast = truth;
    fast.o = 400e-9;
    fast.L = -200e-9;
    Noise noise;
    const auto pts = synthetic_curves(fast, noise);
    const LoggpsFit fit = derive_loggps(pts, fast.S);
    CHECK(fit.params.L == 0);
    CHECK(fit.params.o == Approx(300e-9).epsilon(0.02));
    const double model = 2 * fit.params.o + fit.params.L + 8 * (fit.params.Os + fit.params.Or);
    CHECK(model == Approx(pts.front().half_rtt).epsilon(0.02));
    const bool said = std::any_of(fit.warnings.begin(), fit.warnings.end(), [](const std::string& w) {
      return w.rfind("L came out negative", 0) == 0 && w.find("o + L + o stays the half round trip") != std::string::npos;
    });
    CHECK(said);
  }
  CHECK_THROWS_AS(derive_loggps(std::vector<PrttPoint>{{1, 1, 1, 1, 1}}, 2), std::invalid_argument);
}

TEST_CASE("The jump at S is found on a sparse grid too", "[fit]") {
  // Powers of two only (the quick mode). Below S = 12289 the eager line is steep enough that,
  // extrapolated, it meets the rendezvous times again at 32 KiB: fitted as one curve the jump at
  // 16 KiB would look like a lone outlier. Segmented on each side of S, it is a boundary.
  std::vector<PrttPoint> pts;
  for (std::uint64_t k = 1; k <= (2u << 20); k *= 2) {
    const double kb = static_cast<double>(k);
    const double t = k < 1024 ? 0.6e-6 : k < 12289 ? 1.15e-6 + kb * 0.117e-9 : 4.2e-6 + kb * 0.035e-9;
    pts.push_back({k, t, t / 3, t / 2, t / 2});
  }
  const LoggpsFit fit = derive_loggps(pts, 12289);
  CHECK(fit.S_fit == 16384);
  for (const auto& w : fit.warnings) CHECK(w.find("does not jump") == std::string::npos);
  bool boundary_at_16k = false;
  for (const Segment& s : fit.rtt_segments) boundary_at_16k = boundary_at_16k || pts[s.begin].bytes == 16384;
  CHECK(boundary_at_16k);
  SECTION("no jump where sends start to wait: a warning") {
    for (auto& p : pts) p.half_rtt = 0.6e-6 + static_cast<double>(p.bytes) * 0.05e-9;
    const LoggpsFit flat = derive_loggps(pts, 12289);
    CHECK(flat.S_fit == kInfiniteBytes);
    bool warned = false;
    for (const auto& w : flat.warnings) warned = warned || w.find("does not jump") != std::string::npos;
    CHECK(warned);
  }
}

TEST_CASE("BSPWB g and L per pattern and together", "[fit]") {
  std::vector<double> h;
  for (double x = 1024; x <= 4194304; x *= 2) h.push_back(x);
  Noise noise;
  noise.rel = 0.03;
  const std::vector<std::pair<double, double>> truth{{1e-10, 2e-6}, {2e-10, 1e-6}, {1.5e-10, 3e-6}};
  std::vector<PatternTimes> patterns;
  for (std::size_t p = 0; p < truth.size(); ++p) {
    PatternTimes t{"P" + std::to_string(p), {}};
    for (double x : h) t.seconds.push_back(noise(truth[p].first * x + truth[p].second));
    patterns.push_back(t);
  }
  const BspwbFit fit = fit_bspwb(h, patterns);
  REQUIRE(fit.patterns.size() == 3);
  for (std::size_t p = 0; p < truth.size(); ++p) {
    CHECK(fit.patterns[p].name == "P" + std::to_string(p));
    CHECK(fit.patterns[p].fit.slope == Approx(truth[p].first).epsilon(0.1));
    CHECK(fit.patterns[p].fit.intercept == Approx(truth[p].second).epsilon(0.2));
  }
  CHECK(fit.all.slope == Approx(1.5e-10).epsilon(0.1));  // the average's g is the mean g
  CHECK(fit.all.intercept == Approx(2e-6).epsilon(0.2));
  CHECK_THROWS_AS(fit_bspwb(h, std::vector<PatternTimes>{}), std::invalid_argument);
  CHECK_THROWS_AS(fit_bspwb(h, std::vector<PatternTimes>{{"short", {1.0}}}), std::invalid_argument);
}

// ---- The parameter file ------------------------------------------------------------------------

namespace {

CalibrationParams sample_params() {
  CalibrationParams p;
  p.loggps = machine();
  p.loggps->P = 2;
  MpmParams m;
  m.g = 1.5e-10, m.L = 2e-6, m.residual = 0.03, m.h = {1024, 2048};
  m.patterns.push_back({"Exchange", 1e-10, 1e-6, 0.01, {1.1e-6, 1.2e-6}});
  m.patterns.push_back({"PingPong", 2e-10, -1e-6, 0.02, {}});
  p.mpm = m;
  LinearParams l;
  l.model = {{0.5e-6, 2e9}, {5e-6, std::numeric_limits<double>::infinity()}, 12289};
  l.residual_below = 0.04;
  p.linear = l;
  BroadcastParams b;
  b.bytes = 8;
  b.network.nodes = 2;
  b.network.latency = {0, 3e-7, 3e-7, 0};
  b.network.injection = {0, 1e-7, 1.1e-7, 0};
  p.broadcast = b;
  p.meta.source = "mstep calibrate";
  p.meta.host = "node1";
  p.meta.hosts = {"node1"};
  p.meta.processes = 2;
  p.meta.pair = {0, 1};
  p.meta.S_fit = 16384;
  p.meta.probes_8B = {{"start", 2.5e-7}, {"after point-to-point", 2.75e-7}, {"after collectives", 7.1e-7}};
  p.meta.residuals["half_rtt"] = 0.02;
  p.meta.environment["UCX_RNDV_THRESH"] = "1m";
  p.segments.push_back({"half_rtt", 1, 8192, 5e-7, 1e-10, 0.02, 20, 1});
  p.raw.push_back({8, 5e-7, 2e-7, 1e-7, 2e-7, 0, false});
  p.raw.push_back({16384, 5e-6, 3e-6, 4e-6, 5e-6, 1e-4, true});
  p.warnings.push_back("gap 1 B..8 KiB: fit residual 12% (over 10%): noisy timings?");
  return p;
}

std::string error_of(const std::string& text) {
  try {
    parse_params(text, "p.json");
  } catch (const ParamsError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("Parameter file round trip", "[params]") {
  const CalibrationParams p = sample_params();
  const std::string text = params_to_json(p);
  const CalibrationParams q = parse_params(text, "x.json");
  REQUIRE(q.loggps);
  CHECK(q.loggps->L == p.loggps->L);
  CHECK(q.loggps->Gl == p.loggps->Gl);
  CHECK(q.loggps->s == 1024);
  CHECK(q.loggps->S == 12289);
  CHECK(q.loggps->P == 2);
  CHECK(q.loggps->H == p.loggps->H);
  CHECK(q.loggps->rendezvous_model == RendezvousModel::Delivered);
  CHECK(q.loggps->rendezvous_push == p.loggps->rendezvous_push);
  REQUIRE(q.mpm);
  CHECK(q.mpm->g == p.mpm->g);
  CHECK(q.mpm->patterns.size() == 2);
  CHECK(q.mpm->patterns[0].name == "Exchange");  // order kept
  CHECK(q.mpm->patterns[0].seconds == p.mpm->patterns[0].seconds);
  CHECK(q.mpm->patterns[1].L == -1e-6);
  REQUIRE(q.linear);
  CHECK(q.linear->model.boundary == 12289);
  CHECK(std::isinf(q.linear->model.above.B));
  CHECK(q.linear->model.below.B == 2e9);
  REQUIRE(q.broadcast);
  CHECK(q.broadcast->network.injection == p.broadcast->network.injection);
  CHECK(q.meta.environment.at("UCX_RNDV_THRESH") == "1m");
  CHECK(q.meta.S_fit == 16384);
  CHECK(q.meta.probes_8B == p.meta.probes_8B);  // order kept
  CHECK(q.segments.size() == 1);
  CHECK(q.segments[0].to == 8192);
  REQUIRE(q.raw.size() == 2);
  CHECK(q.raw[1].synchronous);
  CHECK(q.raw[1].late_send_wait == 1e-4);
  CHECK(q.warnings == p.warnings);
  CHECK(params_to_json(q) == text);

  SECTION("infinite sizes are null") {
    CalibrationParams r = p;
    r.loggps->S = r.loggps->s = kInfiniteBytes;
    const std::string t = params_to_json(r);
    CHECK(t.find("\"S\": null") != std::string::npos);
    CHECK(parse_params(t, "x").loggps->S == kInfiniteBytes);
  }
  SECTION("through a file") {
    const auto file = std::filesystem::temp_directory_path() / "mstep_test_params.json";
    write_params(file, p);
    CHECK(read_params(file).loggps->o == p.loggps->o);
    std::filesystem::remove(file);
    CHECK_THROWS_WITH(read_params(file), Catch::Contains("mstep_test_params.json: cannot read parameter file: no such file"));
  }
  SECTION("a file without H and rendezvous (older mstep, presets) keeps MODELS.md's formulas") {
    const CalibrationParams o = parse_params(R"({"L": 1e-6, "o": 1e-7, "Os": 0, "Or": 0, "g": 0, "Gs": 0, "Gl": 0, "s": 10, "S": 100})", "old.json");
    CHECK(o.loggps->H == 0);
    CHECK(o.loggps->rendezvous_model == RendezvousModel::Paper);
    CHECK(params_to_json(o).find("rendezvous") == std::string::npos);
  }
  SECTION("an MPM-only preset") {
    const CalibrationParams m = parse_params(R"({"mpm": {"g": 7.3e-9, "L": -2.11e-5}})", "t3e.json");
    CHECK_FALSE(m.loggps);
    CHECK(m.mpm->L == -2.11e-5);
  }
}

TEST_CASE("Parameter file errors name the file and the key", "[params]") {
  CHECK(error_of("{") .rfind("p.json: not valid JSON: ", 0) == 0);
  CHECK(error_of("[1]") == "p.json: expected a JSON object, got an array");
  CHECK(error_of("{}") .rfind("p.json: no parameters", 0) == 0);
  // g is seconds per byte: a negative one would predict nothing, silently.
  CHECK(error_of(R"({"mpm": {"g": -1, "L": 5e-6}})") == "p.json: key 'mpm.g': -1 is out of range: expected seconds per byte, finite and >= 0");
  CHECK(error_of(R"({"L": 1e-6})") ==
        "p.json: key 'o': missing (a LogGPS parameter file needs L, o, Os, Or, g, Gs, Gl, s and S)");
  const std::string ok = R"("o": 1, "Os": 0, "Or": 0, "g": 0, "Gs": 0, "Gl": 0, "s": 10, "S": null)";
  CHECK(error_of(R"({"L": "fast", )" + ok + "}") == "p.json: key 'L': expected a number, got a string");
  CHECK(error_of(R"({"L": -1, )" + ok + "}") == "p.json: key 'L': -1 is out of range: expected seconds, finite and >= 0");
  CHECK(error_of(R"({"L": 1, "o": 1, "Os": 0, "Or": 0, "g": 0, "Gs": 0, "Gl": 0, "s": 1.5, "S": 4})") ==
        "p.json: key 's': expected a non-negative whole number of bytes (or null for infinite), got 1.5");
  CHECK(error_of(R"({"mpm": {"g": 1}})") == "p.json: key 'mpm.L': missing");
  CHECK(error_of(R"({"L": 1, )" + ok + R"(, "P": 0})") == "p.json: key 'P': expected a process count of at least 1, got 0");
  CHECK(error_of(R"({"L": 1, )" + ok + R"(, "H": -1e-6})") == "p.json: key 'H': -1e-06 is out of range: expected seconds, finite and >= 0");
  CHECK(error_of(R"({"L": 1, )" + ok + R"(, "rendezvous": "fast"})") ==
        "p.json: key 'rendezvous': expected \"paper\" or \"delivered\", got \"fast\"");
  CHECK(error_of(R"({"L": 1, )" + ok + R"(, "rendezvous_push": 1})") == "p.json: key 'rendezvous_push': expected true or false, got a number");
  CHECK(error_of(R"({"mpm": {"g": 1, "L": 1, "combine": "min"}})") ==
        "p.json: key 'mpm.combine': expected \"sum\" or \"max\", got \"min\"");
  CHECK(error_of(R"({"mpm": {"g": 1, "L": 1, "h": [1, 2], "patterns": {"E": {"g": 1, "L": 1, "seconds": [1]}}}})") ==
        "p.json: key 'mpm.patterns.E.seconds': expected one time per h (2), got 1");
  CHECK(error_of(R"({"mpm": {"g": 1, "L": 1}, "broadcast": {"bytes": 8, "lambda": [[0, 1], [1]], "injection": []}})") ==
        "p.json: key 'broadcast.lambda[1]': expected 2 values, got 1");
  CHECK(error_of(R"({"linear": {"boundary": 8, "below": {"T0": 1, "B": 0}, "above": {"T0": 1, "B": null}}})") ==
        "p.json: key 'linear.below.B': 0 is out of range: expected bytes per second, > 0 (null for infinite)");
  CHECK(error_of(R"({"version": 7, "mpm": {"g": 1, "L": 1}})") ==
        "p.json: key 'version': format version 7 is newer than this mstep reads (1)");
  CHECK(error_of(R"({"mpm": {"g": 1, "L": 1}, "meta": {"probes_8B": [{"half_rtt": 1e-7}]}})") ==
        "p.json: key 'meta.probes_8B[0].at': missing");
  CHECK(error_of(R"({"mpm": {"g": 1, "L": 1}, "meta": {"probes_8B": [{"at": "start", "half_rtt": -1}]}})") ==
        "p.json: key 'meta.probes_8B[0].half_rtt': -1 is out of range: expected seconds, finite and >= 0");
  CHECK(error_of(R"({"mpm": {"g": 1, "L": 1}, "raw": {"bytes": [1, 2], "gap": [1]}})") ==
        "p.json: key 'raw.gap': expected 2 values (one per size), got 1");
}
