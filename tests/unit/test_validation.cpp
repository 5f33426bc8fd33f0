// The numbers of `mstep validate` (model/analysis/validation): medians, the per-model summary, which runs
// cross S, the goal verdicts and the tables, on hand-made rows.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "model/analysis/validation.hpp"

using namespace mstep;
using namespace mstep::model;

namespace {

// A row that ran: actual 1 s, and per model (MPM, BSPWB, LogGP, LogGPS, linear) the signed error
// given; predicted = actual * (1 - error / 100). NaN: the model is unavailable.
ValidationRow row(const std::string& name, int ranks, std::vector<double> errors, std::uint64_t at_or_above = 0) {
  ValidationRow r;
  r.case_name = name;
  r.size_label = std::string{"s"};  // (not = "s": a -Wrestrict false positive of GCC 12)
  r.ranks = ranks;
  r.cores = 2;
  r.oversubscribed = ranks > 2;
  r.actual_s = 1.0;
  r.repetitions_s = {1.0};
  for (std::size_t i = 0; i < kValidatedModels.size(); ++i) {
    Prediction p;
    p.model = std::string(kValidatedModels[i]);
    p.available = !std::isnan(errors[i]);
    if (p.available) {
      p.error_pct = errors[i];
      p.predicted_s = 1.0 - errors[i] / 100;
    }
    r.predictions.push_back(p);
  }
  r.sizes.S = 8192;
  r.sizes.below = 10;
  r.sizes.at_or_above = at_or_above;
  return r;
}

ValidationRow failed_row(const std::string& name, int ranks) {
  ValidationRow r;
  r.case_name = name;
  r.size_label = std::string{"s"};  // (not = "s": a -Wrestrict false positive of GCC 12)
  r.ranks = ranks;
  r.error = std::string{"'mpiexec -n 2 x' exited with code 1"};
  return r;
}

Event send(Op op, std::uint64_t bytes, std::int32_t peer = 1, std::uint8_t flags = 0) {
  Event e;
  e.op = op;
  e.send_bytes = bytes;
  e.peer = peer;
  e.flags = flags;
  return e;
}

}  // namespace

TEST_CASE("The median repetition is chosen by index", "[validation]") {
  const std::vector<double> three{0.30, 0.10, 0.20};
  CHECK(median_index(three) == 2);  // 0.20 is the middle one
  const std::vector<double> four{0.4, 0.1, 0.3, 0.2};
  CHECK(median_index(four) == 3);  // sorted 0.1 0.2 0.3 0.4: the lower middle, 0.2, at index 3
  const std::vector<double> one{5.0};
  CHECK(median_index(one) == 0);
  CHECK(median_index(std::vector<double>{}) == 0);
  // A NaN sorts last: of 1, NaN, 3 the median is 3.
  const std::vector<double> nan{1.0, kNaN, 3.0};
  CHECK(median_index(nan) == 2);
}

TEST_CASE("Per-model summary: median and largest |error|, runs over 10%", "[validation]") {
  // LogGPS errors at 2 ranks: +1, -2, +12, -0.5 -> |e| 1, 2, 12, 0.5: median (1 + 2) / 2 = 1.5,
  // max 12, one over 10%. The 4-rank row (-50) and the failed row do not count.
  const double n = kNaN;
  const std::vector<ValidationRow> rows{
      row("a", 2, {5, 5, 3, +1, n}),   row("b", 2, {-20, -20, -4, -2, n}),  row("c", 2, {1, 1, 15, +12, n}),
      row("d", 2, {0, 0, -1, -0.5, n}), row("e", 4, {0, 0, -60, -50, n}), failed_row("f", 2)};
  const ModelSummary gps = summarize_model(rows, "LogGPS", 2);
  CHECK(gps.rows == 4);
  CHECK(gps.median_abs_error_pct == Approx(1.5));
  CHECK(gps.max_abs_error_pct == Approx(12));
  CHECK(gps.over_10pct == 1);
  // MPM: |e| 5, 20, 1, 0: median 3, max 20, one over 10%.
  const ModelSummary mpm = summarize_model(rows, "MPM", 2);
  CHECK(mpm.median_abs_error_pct == Approx(3));
  CHECK(mpm.max_abs_error_pct == Approx(20));
  CHECK(mpm.over_10pct == 1);
  // linear is unavailable everywhere: no runs, NaN statistics.
  const ModelSummary lin = summarize_model(rows, "linear", 2);
  CHECK(lin.rows == 0);
  CHECK(std::isnan(lin.median_abs_error_pct));
  // At 4 ranks only row e counts.
  const ModelSummary gps4 = summarize_model(rows, "LogGPS", 4);
  CHECK(gps4.rows == 1);
  CHECK(gps4.max_abs_error_pct == Approx(50));
  // Exactly 10% is not over 10%.
  const std::vector<ValidationRow> edge{row("x", 2, {10, 10, 10, 10, 10})};
  CHECK(summarize_model(edge, "LogGPS", 2).over_10pct == 0);
}

TEST_CASE("Rank counts with a core a rank get their own summary, oversubscribed ones do not", "[validation]") {
  const double n = kNaN;
  auto on = [](ValidationRow r, int cores) {
    r.cores = cores;
    r.oversubscribed = r.ranks > cores;
    return r;
  };
  // 16 cores: 8 and 4 fit (listed increasing, 2 left out), 32 does not.
  const std::vector<ValidationRow> big{on(row("a", 8, {1, 1, 1, 1, n}), 16), on(row("a", 2, {1, 1, 1, 1, n}), 16),
                                       on(row("a", 4, {1, 1, 1, 1, n}), 16), on(row("b", 32, {1, 1, 1, 1, n}), 16)};
  CHECK(timed_rank_counts(big, 2) == std::vector<int>{4, 8});
  // 2 cores: 4 ranks are oversubscribed, nothing besides 2.
  const std::vector<ValidationRow> small{row("a", 2, {1, 1, 1, 1, n}), row("a", 4, {1, 1, 1, 1, n})};
  CHECK(timed_rank_counts(small, 2).empty());
  // A count whose runs all failed has nothing to summarise.
  const std::vector<ValidationRow> failed{on(failed_row("f", 8), 16)};
  CHECK(timed_rank_counts(failed, 2).empty());
}

TEST_CASE("A run crosses S when any point-to-point message is S bytes or more", "[validation]") {
  TraceDir trace;
  RankTrace r0, r1;
  r0.events = {send(Op::Send, 100), send(Op::Isend, 8192), send(Op::Send, 8191),
               send(Op::Send, 1 << 20, kNoPeer),                     // to MPI_PROC_NULL: not a message
               send(Op::Bcast, 1 << 20, 0, kRoot)};                  // collective: not counted
  r1.events = {send(Op::Sendrecv, 16384, 0), send(Op::Sendrecv, 0, 0, kContinuation | kRecvHalf),
               send(Op::Recv, 0, 0)};
  trace.ranks.emplace_back(r0);
  trace.ranks.emplace_back(std::nullopt);  // an unreadable rank is skipped
  trace.ranks.emplace_back(r1);
  const SizesAroundS s = sizes_around(trace, 8192);
  CHECK(s.S == 8192);
  CHECK(s.below == 2);        // 100 and 8191
  CHECK(s.at_or_above == 2);  // 8192 (Isend) and 16384 (Sendrecv's send half)
  CHECK(s.smallest == 100);
  CHECK(s.largest == 16384);
  CHECK(s.crosses());
}

TEST_CASE("A run with every message below S does not cross it", "[validation]") {
  TraceDir trace;
  RankTrace r0;
  r0.events = {send(Op::Send, 8), send(Op::Send, 4096)};
  trace.ranks.emplace_back(r0);
  const SizesAroundS below = sizes_around(trace, 8192);
  CHECK(below.below == 2);
  CHECK(below.at_or_above == 0);
  CHECK_FALSE(below.crosses());
  // S infinite (LogGP parameters, or none): nothing ever crosses.
  CHECK_FALSE(sizes_around(trace, kInfiniteBytes).crosses());
  // No messages at all.
  const SizesAroundS none = sizes_around(TraceDir{}, 8192);
  CHECK(none.messages() == 0);
  CHECK(none.smallest == 0);
  CHECK_FALSE(none.crosses());
}

TEST_CASE("Crossing rows compare |LogGPS error| with |LogGP error|", "[validation]") {
  const double n = kNaN;
  const std::vector<ValidationRow> rows{
      row("gauss", 2, {0, 0, -8, +2, n}, 5),    // crosses: LogGPS 2 < LogGP 8, better
      row("ring", 2, {0, 0, +1, -3, n}, 7),     // crosses: LogGPS 3 > LogGP 1, not better
      row("fft", 2, {0, 0, +9, +1, n}, 0),      // no message over S: not listed
      row("halo", 2, {0, 0, -4, -4, n}, 2),     // crosses: a tie is not better
      row("psrs", 2, {0, 0, -4, 4.09, n}, 2),   // crosses: 0.09 points apart, still a tie
      row("big", 4, {0, 0, -40, -1, n}, 9)};    // another rank count
  const auto c = crossing_rows(rows, 2);
  REQUIRE(c.size() == 4);
  CHECK(c[0].case_name == "gauss");
  CHECK(c[0].loggps_abs_error_pct == 2);
  CHECK(c[0].loggp_abs_error_pct == 8);
  CHECK(c[0].loggps_better);
  CHECK(c[1].case_name == "ring");
  CHECK_FALSE(c[1].loggps_better);
  CHECK(c[2].case_name == "halo");
  CHECK_FALSE(c[2].loggps_better);
  CHECK(c[2].tie);
  CHECK_FALSE(c[3].loggps_better);
  CHECK(c[3].tie);
  CHECK_FALSE(c[1].tie);
  // Ties are named and do not fail the goal; the ring row, where LogGP is better, does.
  const auto goals = check_goals(rows, 2);
  CHECK(goals[2].verdict == Verdict::NotMet);
  CHECK(goals[2].detail == "better on 1 of 4; a tie (within 0.1 points) on halo s, psrs s; not better on ring s");
  const std::vector<ValidationRow> no_ring{rows[0], rows[3], rows[4]};
  CHECK(check_goals(no_ring, 2)[2].verdict == Verdict::Met);
}

TEST_CASE("Goals met", "[validation]") {
  const double n = kNaN;
  // LogGPS |e| 1, 2, 9.9: median 2 <= 3, max 9.9 <= 10; the one crossing row has LogGPS better.
  const std::vector<ValidationRow> rows{row("a", 2, {0, 0, 1, 1, n}), row("b", 2, {0, 0, -7, -2, n}, 3),
                                        row("c", 2, {0, 0, 9.9, 9.9, n}), row("d", 4, {0, 0, 0, 80, n})};
  const auto goals = check_goals(rows, 2);
  REQUIRE(goals.size() == 3);
  CHECK(goals[0].verdict == Verdict::Met);
  CHECK(goals[0].detail == "median 2.00% over 3 runs");
  CHECK(goals[1].verdict == Verdict::Met);
  CHECK(goals[1].detail == "largest 9.90%, 0 over 10%");
  CHECK(goals[2].verdict == Verdict::Met);
  CHECK(goals[2].detail == "better on 1 of 1");
  CHECK(verdict_name(goals[0].verdict) == "met");
}

TEST_CASE("Goals not met, and untested", "[validation]") {
  const double n = kNaN;
  SECTION("median over 3% and one run over 10%, LogGPS not better where crossing S") {
    const std::vector<ValidationRow> rows{row("a", 2, {0, 0, 4, 4, n}), row("b", 2, {0, 0, -1, -11, n}, 2),
                                          row("c", 2, {0, 0, 2, 2, n})};
    const auto goals = check_goals(rows, 2);
    CHECK(goals[0].verdict == Verdict::NotMet);  // median of 4, 11, 2 is 4
    CHECK(goals[1].verdict == Verdict::NotMet);
    CHECK(goals[1].detail == "largest 11.00%, 1 over 10%");
    CHECK(goals[2].verdict == Verdict::NotMet);
    CHECK(goals[2].detail == "better on 0 of 1; not better on b s");
    CHECK(verdict_name(goals[2].verdict) == "not met");
  }
  SECTION("a failed run leaves the suite unvalidated") {
    const std::vector<ValidationRow> rows{row("a", 2, {0, 0, 1, 1, n}), failed_row("b", 2)};
    const auto goals = check_goals(rows, 2);
    CHECK(goals[0].verdict == Verdict::NotMet);
    CHECK(goals[0].detail == "median 1.00% over 1 run; 1 run failed, so the suite is not validated");
    CHECK(goals[1].verdict == Verdict::NotMet);
  }
  SECTION("no LogGPS prediction and nothing crossing S: untested") {
    const std::vector<ValidationRow> rows{row("a", 2, {1, 1, n, n, n})};
    const auto goals = check_goals(rows, 2);
    CHECK(goals[0].verdict == Verdict::Untested);
    CHECK(goals[1].verdict == Verdict::Untested);
    CHECK(goals[2].verdict == Verdict::Untested);
    CHECK(goals[2].detail == "no run at 2 ranks sends a message of S bytes or more");
    CHECK(verdict_name(Verdict::Untested) == "untested");
  }
}

TEST_CASE("Signed errors and seconds as the tables print them", "[validation]") {
  CHECK(format_signed_pct(1.234) == "+1.2");
  CHECK(format_signed_pct(-1.25, 2) == "-1.25");
  CHECK(format_signed_pct(-0.04) == "+0.0");  // rounds to zero: no sign of noise
  CHECK(format_signed_pct(0) == "+0.0");
  CHECK(format_signed_pct(12.0) == "+12.0");
  CHECK(format_signed_pct(kNaN) == "-");
  CHECK(format_signed_pct(-INFINITY) == "-inf");
  CHECK(format_seconds(0.0123456789) == "0.012346");
  CHECK(format_seconds(kNaN) == "-");
}

TEST_CASE("The text table has one line per row with signed errors and notes", "[validation]") {
  const double n = kNaN;
  ValidationRow a = row("gauss", 2, {-1.5, 2.3, 8, -0.5, n}, 3);
  a.size_label = "n1536";
  a.actual_s = 2.0;  // predictions stay as row() made them: the table prints what it is given
  ValidationRow ring = row("ring", 4, {0, 0, 0, 0, 0});
  ring.other_period = true;  // the run's own round trip was not the calibration's
  ring.probe_init_s = 0.62e-6, ring.probe_finalize_s = 0.654e-6;
  const std::vector<ValidationRow> rows{a, ring, failed_row("fft", 2)};
  const std::string t = text_table(rows);
  const auto first_newline = t.find('\n');
  const std::string header = t.substr(0, first_newline);
  CHECK(header.find("case") == 0);
  CHECK(header.find("LogGPS s") != std::string::npos);
  CHECK(header.find(">=S msgs") != std::string::npos);
  std::vector<std::string> lines;
  for (std::size_t p = 0, q; (q = t.find('\n', p)) != std::string::npos; p = q + 1) lines.push_back(t.substr(p, q - p));
  REQUIRE(lines.size() == 4);
  CHECK(lines[1].find("gauss") == 0);
  CHECK(lines[1].find("n1536") != std::string::npos);
  CHECK(lines[1].find("2.000000") != std::string::npos);
  CHECK(lines[1].find("-1.5") != std::string::npos);   // MPM
  CHECK(lines[1].find("+2.3") != std::string::npos);   // BSPWB
  CHECK(lines[1].find("+8.0") != std::string::npos);   // LogGP
  CHECK(lines[1].find("-0.5") != std::string::npos);   // LogGPS
  CHECK(lines[1].find("3/13") != std::string::npos);   // 3 of 13 messages at or over S
  CHECK(lines[2].find("oversubscribed: 4 ranks on 2 cores; another period: 8 B half round trip 0.62 / 0.65 us at Init / "
                      "Finalize") != std::string::npos);
  CHECK(lines[1].find("another period") == std::string::npos);
  CHECK(lines[3].find("failed: 'mpiexec -n 2 x' exited with code 1") != std::string::npos);
  CHECK(lines[3].find("fft") == 0);
  // Every row's columns line up with the header's, whatever the length of the names.
  const std::vector<ValidationRow> long_name{row("master_worker_long", 2, {1, 1, 1, 1, 1})};
  const std::string lt = text_table(long_name);
  const auto l1 = lt.substr(0, lt.find('\n')), l2 = lt.substr(lt.find('\n') + 1);
  CHECK(l1.find("actual s") + std::string("actual s").size() == l2.find("1.000000") + std::string("1.000000").size());
}

TEST_CASE("The markdown table has a header rule and the arguments", "[validation]") {
  ValidationRow a = row("halo", 4, {1, 2, 3, 4, 5});
  a.args = {"5000", "50"};
  const std::vector<ValidationRow> rows{a};
  const std::string md = markdown_table(rows);
  CHECK(md.rfind("| case | size | args | ranks | actual s | MPM s | MPM err % |", 0) == 0);
  CHECK(md.find("|---|---|---|--:|--:|") != std::string::npos);
  CHECK(md.find("| halo | s | `5000 50` | 4 | 1.000000 | 0.990000 | +1.0 |") != std::string::npos);
  CHECK(md.find("oversubscribed: 4 ranks on 2 cores |") != std::string::npos);
}

TEST_CASE("The summary and goals text name every model and every goal", "[validation]") {
  const double n = kNaN;
  const std::vector<ValidationRow> rows{row("gauss", 2, {1, 1, -8, 2, n}, 4)};
  const std::string s = summary_text(rows, 2, false);
  for (const auto m : kValidatedModels) CHECK(s.find(std::string(m)) != std::string::npos);
  const std::string g = goals_text(rows, 2, false);
  CHECK(g.find("gauss s: LogGPS 2.00%, LogGP 8.00%: LogGPS better") != std::string::npos);
  CHECK(g.find("median |LogGPS error| <= 3% at 2 ranks: met (median 2.00% over 1 run)") != std::string::npos);
  CHECK(g.find("LogGPS better than LogGP wherever messages cross S: met") != std::string::npos);
  const std::string md = summary_text(rows, 2, true);
  CHECK(md.find("| LogGPS | 1 | 2.0 | 2.0 | 0 |") != std::string::npos);
  CHECK(g.find("another period") == std::string::npos);
  // A run in another period of the machine than its calibration is counted and said.
  std::vector<ValidationRow> two{rows[0], row("ring", 2, {1, 1, 1, 17, 1})};
  two[1].other_period = true;
  CHECK(goals_text(two, 2, false).find("  1 of 2 runs at 2 ranks came out in another period of the machine than their "
                                       "calibration") != std::string::npos);
  CHECK(goals_text(two, 2, false).find("calibration made after the runs") == std::string::npos);
  // One predicted with the calibration after the runs (its period): its note says so, the goals count it.
  two[1].params_after = true;
  two[1].other_period = false;
  const std::string after = goals_text(two, 2, false);
  CHECK(after.find("  1 of 2 runs at 2 ranks were predicted with the calibration made after the runs, whose 8-byte half "
                   "round trip was nearer theirs than the first calibration's\n") != std::string::npos);
  CHECK(after.find("another period") == std::string::npos);
  CHECK(text_table(two).find("predicted with the calibration after the runs (the run's period)") != std::string::npos);
  CHECK(markdown_table(two).find("predicted with the calibration after the runs (the run's period)") != std::string::npos);
  CHECK(text_table(std::span(two).first(1)).find("calibration after") == std::string::npos);
  // One predicted with a calibration made during the runs: said and counted apart.
  two[1].params_after = false;
  two[1].params_during = true;
  const std::string during = goals_text(two, 2, false);
  CHECK(during.find("  1 of 2 runs at 2 ranks were predicted with a calibration made during the runs, when a run came "
                    "out of every calibration's period: their own period's\n") != std::string::npos);
  CHECK(during.find("calibration made after the runs") == std::string::npos);
  CHECK(text_table(two).find("predicted with a calibration made during the runs (the run's period)") != std::string::npos);
  CHECK(text_table(two).find("calibration after the runs") == std::string::npos);
}
