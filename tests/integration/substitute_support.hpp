// Helpers of the substitute collectives' integration tests (test_substitute.cpp,
// test_substitute_gathers.cpp, test_substitute_reduce.cpp): the count shim's lines, meta.json, the
// report's charged algorithms, a test program's byte-for-byte comparison with MPICH's own
// collective, and the delayed and undelayed runs of a delay test.
#pragma once

#include "harness.hpp"

namespace mstep_it {

inline const std::string kCountShim = COUNT_SHIM;

struct Counts {
  long send = 0, recv = 0, sendrecv = 0;
  bool operator==(const Counts&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const Counts& c) {
  return os << "{send " << c.send << ", recv " << c.recv << ", sendrecv " << c.sendrecv << "}";
}

// The shim's lines, per world rank.
inline std::map<int, Counts> counts_of(const std::string& err) {
  std::map<int, Counts> out;
  for (const auto& l : lines_of(err)) {
    if (l.rfind("pmpi_count ", 0) != 0) continue;
    Counts c;
    c.send = parse_int_after(l, "send=");
    c.recv = parse_int_after(l, "recv=");
    c.sendrecv = parse_int_after(l, "sendrecv=");
    out[parse_int_after(l, "rank=")] = c;
  }
  return out;
}

inline json meta_of(const fs::path& dir) {
  std::ifstream in(dir / "meta.json");
  std::stringstream text;
  text << in.rdbuf();
  return parse_json(text.str());
}

// `mstep report`'s collective_algorithms: how its replay charged each kind of collective.
inline std::vector<std::string> report_algorithms(const fs::path& dir, const fs::path& params) {
  const json rep = mstep_json("report", dir, {"--params", params.string()}, no_default_params(dir.parent_path()));
  return rep.at("collective_algorithms").get<std::vector<std::string>>();
}

inline std::string fmt_name(const char* algo, int ranks) { return std::string(algo) + "_" + std::to_string(ranks); }

// `program` (allreduce_check, alltoall_check: every case against MPICH's own, byte for byte) at
// `ranks` ranks under `setting`=`algo`: it ends with "PROGRAM: RANKS ranks, CASES cases: ok".
inline void check_against_mpich(const char* program, const char* setting, const char* algo, int ranks, int cases) {
  INFO(setting << "=" << algo << " at " << ranks << " ranks");
  const Result r = record(test_dir() / fmt_name(algo, ranks), ranks, {prog(program)}, {{"LD_PRELOAD", kShim}, {setting, algo}});
  check_recorded(r, ranks);
  CHECK(r.out.find(std::string(program) + ": " + std::to_string(ranks) + " ranks, " + std::to_string(cases) +
                   " cases: ok") != std::string::npos);
}

// The substitutes' delay tests: `program loop 50` at 2 ranks under MSTEP_DELAY_L=50us, once with
// `substitutes` set (in test_dir()/NAME_delayed; it must print "PROGRAM: 2 ranks, 50 calls: ok")
// and once without (NAME_undelayed: MPICH's own, which the apparatus does not delay). Each run's
// seconds in `op`, summed over the world ranks `ranks`, each of which made 50 calls.
struct DelayedRuns {
  double delayed = 0, mpich = 0;
};
inline DelayedRuns delayed_and_mpich(const std::string& name, const char* program, const char* op,
                                     const std::vector<int>& ranks, Env substitutes) {
  const auto seconds = [&](const fs::path& dir) {
    const Stats s = stats(dir);
    double sum = 0;
    for (const int r : ranks) {
      const json& rank = s.j.at("per_rank").at(r);
      CHECK(rank.at("calls").at(op).get<int>() == 50);
      sum += rank.at("time_s").at(op).get<double>();
    }
    return sum;
  };
  DelayedRuns t;
  const fs::path dir = test_dir() / (name + "_delayed");
  substitutes.emplace_back("MSTEP_DELAY_L", "50us");
  const Result r = record(dir, 2, {prog(program), "loop", "50"}, substitutes);
  check_recorded(r, 2);
  CHECK(r.out.find(std::string(program) + ": 2 ranks, 50 calls: ok") != std::string::npos);
  t.delayed = seconds(dir);
  const fs::path mpich = test_dir() / (name + "_undelayed");
  const Result m = record(mpich, 2, {prog(program), "loop", "50"}, {{"MSTEP_DELAY_L", "50us"}});
  check_recorded(m, 2);
  t.mpich = seconds(mpich);
  return t;
}

// How many of `err`'s lines are `line` exactly.
inline std::size_t lines_equal(const std::string& err, const std::string& line) {
  const auto lines = lines_of(err);
  return static_cast<std::size_t>(std::count(lines.begin(), lines.end(), line));
}

}  // namespace mstep_it
