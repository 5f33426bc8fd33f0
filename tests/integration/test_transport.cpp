// The network a run had and the one its parameters were calibrated on: meta.json records rank 0's
// UCX_*, MPIR_CVAR_* and MPICH_* variables, and `mstep report` / `mstep whatif` say in one line
// when they differ from those in the parameter file.
#include "harness.hpp"

using namespace mstep_it;

namespace {

// A parameter file as mstep calibrate writes it, calibrated under `environment` (a JSON object).
fs::path params_with(const fs::path& dir, const std::string& environment) {
  const fs::path p = dir / "params.json";
  std::ofstream(p) << R"J({"L": 2e-7, "o": 2e-7, "Os": 0, "Or": 0, "g": 2e-7, "Gs": 1e-10, "Gl": 1e-10,
    "s": 8256, "S": 8256, "meta": {"source": "mstep calibrate (test)", "environment": )J"
                   << environment << "}}";
  return p;
}

}  // namespace

TEST_CASE("a trace recorded over TCP, reported with shared-memory parameters, says so in one line") {
  const fs::path dir = test_dir();
  const fs::path trace = dir / "tcp";
  // A job over TCP can hang in MPI_Finalize (UCX's, natively too): ended after 30 s, and run once more.
  Result r = record(trace, 2, {prog("delay"), "5"}, {{"UCX_TLS", "tcp,self"}}, {}, 30);
  if (r.timed_out) r = record(trace, 2, {prog("delay"), "5"}, {{"UCX_TLS", "tcp,self"}}, {"-f"}, 30);
  check_recorded(r, 2);
  std::ifstream in(trace / "meta.json");
  std::stringstream text;
  text << in.rdbuf();
  const json meta = parse_json(text.str());
  CHECK(meta.at("environment").at("UCX_TLS") == "tcp,self");

  const fs::path shm = params_with(dir, "{}");
  Result rep = run({kMstep, "report", trace.string(), "--params", shm.string()});
  CHECK(rep.code == 0);
  CHECK(rep.err == "mstep: warning: the run and its parameters are from different networks (UCX_TLS tcp,self in the "
                   "run, unset in " + shm.string() + "): the predictions are for the parameters' network\n");
  rep = run({kMstep, "whatif", trace.string(), "--params", shm.string(), "--scale", "L=2"});
  CHECK(rep.code == 0);
  CHECK(rep.err.find("mstep: warning: the run and its parameters are from different networks") != std::string::npos);

  const fs::path tcp = params_with(dir, R"({"UCX_TLS": "tcp,self"})");
  rep = run({kMstep, "report", trace.string(), "--params", tcp.string()});
  CHECK(rep.code == 0);
  CHECK(rep.err.empty());
}
