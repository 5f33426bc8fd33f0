// Writing parameter files (params.hpp): the JSON `mstep calibrate` writes and `mstep params`
// prints, written through a temporary file so that a full disk never leaves half a file.
#include <cmath>
#include <fstream>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/params/params.hpp"

namespace mstep::model {
namespace {

using ojson = nlohmann::ordered_json;

// JSON numbers for output: non-finite values become null.
ojson num(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }
ojson size(std::uint64_t v) { return v == kInfiniteBytes ? ojson(nullptr) : ojson(v); }

ojson line_json(const LinearCost& c, double residual) {
  return ojson{{"T0", num(c.T0)}, {"B", num(c.B)}, {"residual", num(residual)}};
}

}  // namespace

std::string params_to_json(const CalibrationParams& p) {
  ojson j;
  j["format"] = "mstep-params";
  j["version"] = kParamsFormatVersion;
  if (p.loggps) {
    const LogGPSParams& l = *p.loggps;
    j["L"] = num(l.L), j["o"] = num(l.o), j["Os"] = num(l.Os), j["Or"] = num(l.Or);
    j["g"] = num(l.g), j["Gs"] = num(l.Gs), j["Gl"] = num(l.Gl);
    j["s"] = size(l.s), j["S"] = size(l.S), j["P"] = l.P;
    if (l.H != 0 || l.rendezvous_model != RendezvousModel::Paper) {
      j["H"] = num(l.H);
      j["rendezvous"] = l.rendezvous_model == RendezvousModel::Delivered ? "delivered" : "paper";
      j["rendezvous_push"] = l.rendezvous_push;
    }
  }
  if (p.cold) {
    const ColdStart& c = *p.cold;
    j["cold"] = ojson{{"messages", c.messages}, {"send", num(c.send)}, {"recv", num(c.recv)},
                      {"from", size(c.from)},   {"to", size(c.to)},     {"bytes", c.bytes},
                      {"fresh_per_byte", num(c.fresh_per_byte)}, {"fresh_from", size(c.fresh_from)}};
  }
  if (p.mpm) {
    const MpmParams& m = *p.mpm;
    ojson mj{{"g", num(m.g)}, {"L", num(m.L)}, {"residual", num(m.residual)},
             {"combine", m.combine == HCombine::Sum ? "sum" : "max"}};
    ojson h = ojson::array();
    for (double x : m.h) h.push_back(num(x));
    mj["h"] = h;
    ojson pats = ojson::object();
    for (const MpmPattern& pt : m.patterns) {
      ojson pj{{"g", num(pt.g)}, {"L", num(pt.L)}, {"residual", num(pt.residual)}};
      if (!pt.seconds.empty()) {
        ojson s = ojson::array();
        for (double x : pt.seconds) s.push_back(num(x));
        pj["seconds"] = s;
      }
      pats[pt.name] = pj;
    }
    mj["patterns"] = pats;
    j["mpm"] = mj;
  }
  if (p.linear) {
    j["linear"] = ojson{{"boundary", size(p.linear->model.boundary)},
                        {"below", line_json(p.linear->model.below, p.linear->residual_below)},
                        {"above", line_json(p.linear->model.above, p.linear->residual_above)}};
  }
  if (p.broadcast) {
    const BroadcastNetwork& n = p.broadcast->network;
    auto matrix = [&](const std::vector<double>& m) {
      ojson rows = ojson::array();
      for (std::size_t u = 0; u < n.nodes; ++u) {
        ojson row = ojson::array();
        for (std::size_t v = 0; v < n.nodes; ++v) row.push_back(num(m[u * n.nodes + v]));
        rows.push_back(row);
      }
      return rows;
    };
    j["broadcast"] = ojson{{"bytes", p.broadcast->bytes}, {"lambda", matrix(n.latency)},
                           {"injection", matrix(n.injection)}};
  }
  if (!p.collectives.empty()) j["collectives"] = collective_times_json(p.collectives);
  const ParamsMeta& m = p.meta;
  ojson mj = ojson::object();
  auto str = [&](const char* k, const std::string& v) {
    if (!v.empty()) mj[k] = v;
  };
  str("source", m.source), str("platform", m.platform), str("host", m.host);
  if (!m.hosts.empty()) mj["hosts"] = m.hosts;
  str("mpi_library", m.mpi_library), str("mpi_version", m.mpi_version), str("date", m.date);
  if (m.processes > 0) mj["processes"] = m.processes;
  if (!m.pair.empty()) mj["pair"] = m.pair;
  str("mode", m.mode);
  if (m.duration_s > 0) mj["duration_s"] = num(m.duration_s);
  if (m.half_rtt_8B > 0) mj["half_rtt_8B"] = num(m.half_rtt_8B);
  for (const auto& [at, half] : m.probes_8B) mj["probes_8B"].push_back({{"at", at}, {"half_rtt", num(half)}});
  if (p.loggps || m.S_fit != kInfiniteBytes) mj["S_fit"] = size(m.S_fit);
  if (!m.residuals.empty()) {
    ojson r = ojson::object();
    for (const auto& [k, v] : m.residuals) r[k] = num(v);
    mj["residuals"] = r;
  }
  if (!m.environment.empty()) mj["environment"] = m.environment;
  if (!m.notes.empty()) mj["notes"] = m.notes;
  j["meta"] = mj;
  if (!p.segments.empty()) {
    ojson fits = ojson::object();
    for (const CurveSegment& s : p.segments) {
      if (!fits.contains(s.curve)) fits[s.curve] = ojson::array();
      fits[s.curve].push_back(ojson{{"from", s.from}, {"to", s.to}, {"intercept", num(s.intercept)},
                                    {"slope", num(s.slope)}, {"residual", num(s.residual)},
                                    {"points", s.points}, {"outliers", s.outliers}});
    }
    j["fits"] = fits;
  }
  if (!p.raw.empty()) {
    ojson raw = ojson::object();
    auto column = [&](const char* name, auto get) {
      ojson a = ojson::array();
      for (const RawPoint& x : p.raw) a.push_back(get(x));
      raw[name] = a;
    };
    column("bytes", [](const RawPoint& x) { return ojson(x.bytes); });
    column("half_rtt", [](const RawPoint& x) { return num(x.half_rtt); });
    column("gap", [](const RawPoint& x) { return num(x.gap); });
    column("send_overhead", [](const RawPoint& x) { return num(x.send_overhead); });
    column("recv_overhead", [](const RawPoint& x) { return num(x.recv_overhead); });
    column("late_send_wait", [](const RawPoint& x) { return num(x.late_send_wait); });
    column("synchronous", [](const RawPoint& x) { return ojson(x.synchronous); });
    j["raw"] = raw;
  }
  j["warnings"] = p.warnings;
  return j.dump(2) + "\n";
}

void write_params(const std::filesystem::path& file, const CalibrationParams& params) {
  const std::string text = params_to_json(params);
  const std::filesystem::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw ParamsError(fmt::format("{}: cannot write parameter file", file.string()));
    out << text;
    out.flush();
    if (!out) throw ParamsError(fmt::format("{}: cannot write parameter file (disk full?)", file.string()));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw ParamsError(fmt::format("{}: cannot write parameter file: {}", file.string(), ec.message()));
  }
}

}  // namespace mstep::model
