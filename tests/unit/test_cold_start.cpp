// The cold start of a pair (model/params/cold_start.hpp): the fit on synthetic round trips with a known
// cold prefix and noise, and the parameter file's "cold" object.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "model/params/cold_start.hpp"
#include "model/params/params.hpp"

using namespace mstep::model;

namespace {

constexpr double us = 1e-6;

struct Samples {
  std::vector<double> rtt, send;
};

// n round trips: the first `cold` cost 25 us more to send and 15 more to receive; warm ones
// take 1.2 us (0.4 in MPI_Send); every sample gets up to 5% noise, and `spikes` warm ones
// (every 37th from the 100th) a 30 us hiccup, as a busy machine gives.
Samples synthetic(std::size_t n, std::size_t cold, std::size_t spikes) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(1.0, 1.05);
  Samples s;
  for (std::size_t i = 0; i < n; ++i) {
    double send = 0.4 * us, rtt = 1.2 * us;
    if (i < cold) send += 25 * us, rtt += 40 * us;
    s.send.push_back(send * noise(rng));
    s.rtt.push_back(rtt * noise(rng));
  }
  for (std::size_t k = 0, i = 100; k < spikes && i < n; ++k, i += 37) s.rtt[i] += 30 * us;
  return s;
}

}  // namespace

TEST_CASE("the cold prefix and its extra costs are recovered", "[cold]") {
  const Samples s = synthetic(512, 64, 5);
  const ColdStart c = fit_cold_start(s.rtt, s.send, 4096);
  CHECK(c.messages == 64);
  CHECK(c.bytes == 4096);
  // Medians with noise of at most 5% of the cold times: 25 us (send) and 40 - 25 = 15 us.
  CHECK(c.send == Approx(25 * us).epsilon(0.06));
  CHECK(c.recv == Approx(15 * us).epsilon(0.15));
}

TEST_CASE("a warm channel with hiccups has no cold start", "[cold]") {
  const Samples s = synthetic(512, 0, 8);
  const ColdStart c = fit_cold_start(s.rtt, s.send, 4096);
  CHECK(c.messages == 0);
  CHECK_FALSE(c.applies(4096));
}

TEST_CASE("a cold run with a warm hole still counts, isolated cold messages after it do not", "[cold]") {
  Samples s = synthetic(256, 16, 0);
  s.rtt[17] += 40 * us;  // 18 cold of the first 19: +18 - 1 beats the +16 of the first 16
  s.rtt[18] += 40 * us;
  s.rtt[40] += 40 * us;  // 19 cold of 41: +19 - 22, no
  CHECK(fit_cold_start(s.rtt, s.send, 4096).messages == 19);
  CHECK(fit_cold_start(std::vector<double>(8, 1e-3), std::vector<double>(8, 1e-3), 4096).messages == 0);  // too few samples
}

TEST_CASE("the cold start applies to its size range only", "[cold]") {
  ColdStart c;
  c.messages = 64, c.from = 128, c.to = 8256;
  CHECK_FALSE(c.applies(127));
  CHECK(c.applies(128));
  CHECK(c.applies(8255));
  CHECK_FALSE(c.applies(8256));
}

TEST_CASE("the parameter file's cold object", "[cold][params]") {
  const std::string loggps = R"("L": 1e-7, "o": 2e-7, "Os": 0, "Or": 0, "g": 1e-7, "Gs": 0, "Gl": 0, "s": 128, "S": 8256)";
  const CalibrationParams p = parse_params(
      "{" + loggps + R"(, "cold": {"messages": 64, "send": 2.5e-5, "recv": 1e-5, "from": 128, "to": 8256, "bytes": 4096}})", "c.json");
  REQUIRE(p.cold);
  CHECK(p.cold->messages == 64);
  CHECK(p.cold->send == 2.5e-5);
  CHECK(p.cold->to == 8256);
  const CalibrationParams q = parse_params(params_to_json(p), "c.json");
  REQUIRE(q.cold);
  CHECK(q.cold->recv == 1e-5);
  CHECK(q.cold->bytes == 4096);
  CHECK_FALSE(parse_params("{" + loggps + "}", "c.json").cold);
  CHECK_THROWS_WITH(parse_params("{" + loggps + R"(, "cold": {"messages": 64}})", "c.json"),
                    "c.json: key 'cold.send': missing");
  CHECK_THROWS_WITH(parse_params("{" + loggps + R"(, "cold": {"messages": -1, "send": 0, "recv": 0, "from": 0, "to": null}})", "c.json"),
                    Catch::StartsWith("c.json: key 'cold.messages': expected a non-negative whole number"));
}

TEST_CASE("The sizes that pay the cold start: s where the fit found it, never what was measured not to pay",
          "[cold]") {
  // A short protocol found below S: it starts at s (256 B), whether or not 8 B was measured.
  CHECK(cold_start_from(256, 8256, 4096, std::nullopt) == 256);
  CHECK(cold_start_from(256, 8256, 4096, std::uint64_t{8}) == 256);
  // No short protocol found (s = S): every size did, from 0; with 8 B measured not to pay, from 9.
  CHECK(cold_start_from(8256, 8256, 4096, std::nullopt) == 0);
  CHECK(cold_start_from(8256, 8256, 4096, std::uint64_t{8}) == 9);
  // s above the measured size says nothing about it: from 0 (or past the small size).
  CHECK(cold_start_from(6000, 8256, 4096, std::nullopt) == 0);
  CHECK(cold_start_from(6000, 8256, 4096, std::uint64_t{8}) == 9);
}
