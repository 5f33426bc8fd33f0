// Reading parameter files (params.hpp): every key checked, every error one line naming the file,
// the key and what was expected; writing them is params_write.cpp.
#include "model/params/params.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/params/params_check.hpp"

namespace mstep::model {
namespace {

// Ordered on reading too: the patterns keep the order of the file.
using json = nlohmann::ordered_json;
constexpr double kInf = std::numeric_limits<double>::infinity();

const char* kind(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::discarded: return "nothing";
    default: return "a number";
  }
}

// Reads values out of one file, naming the file and the dotted key in every error.
struct Reader {
  std::string file;

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw ParamsError(fmt::format("{}: key '{}': {}", file, key, what));
  }
  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  const json* find(const json& obj, const std::string& key) const {
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  const json& need(const json& obj, const std::string& path, const std::string& key,
                   const std::string& why = "missing") const {
    const json* v = find(obj, key);
    if (!v) fail(join(path, key), why);
    return *v;
  }
  double number(const json& v, const std::string& key, bool allow_negative = true) const {
    if (!v.is_number()) fail(key, fmt::format("expected a number, got {}", kind(v)));
    const double d = v.get<double>();
    if (!std::isfinite(d)) out_of_range(file, key, fmt::format("{}", d));
    if (!allow_negative && d < 0) out_of_range(file, key, fmt::format("{}", d));
    return d;
  }
  // A number, or null for +infinity (B of a line that does not grow with the size).
  double number_or_inf(const json& v, const std::string& key) const {
    return v.is_null() ? kInf : number(v, key, false);
  }
  std::uint64_t bytes(const json& v, const std::string& key, bool null_is_infinite) const {
    if (null_is_infinite && v.is_null()) return kInfiniteBytes;
    if (!v.is_number_unsigned())
      fail(key, fmt::format("expected a non-negative whole number of bytes{}, got {}",
                            null_is_infinite ? " (or null for infinite)" : "",
                            v.is_number() ? fmt::format("{}", v.get<double>()) : kind(v)));
    return v.get<std::uint64_t>();
  }
  std::uint32_t processes(const json& v, const std::string& key) const {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0 ||
        v.get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max())
      fail(key, fmt::format("expected a process count of at least 1, got {}", v.dump()));
    return static_cast<std::uint32_t>(v.get<std::uint64_t>());
  }
  std::string text(const json& v, const std::string& key) const {
    if (!v.is_string()) fail(key, fmt::format("expected a string, got {}", kind(v)));
    return v.get<std::string>();
  }
  const json& object(const json& v, const std::string& key) const {
    if (!v.is_object()) fail(key, fmt::format("expected an object, got {}", kind(v)));
    return v;
  }
  const json& array(const json& v, const std::string& key) const {
    if (!v.is_array()) fail(key, fmt::format("expected an array, got {}", kind(v)));
    return v;
  }
  std::vector<double> numbers(const json& v, const std::string& key) const {
    std::vector<double> out;
    for (std::size_t i = 0; i < array(v, key).size(); ++i)
      out.push_back(number(v[i], fmt::format("{}[{}]", key, i)));
    return out;
  }
  // A square matrix of non-negative numbers, n x n.
  std::vector<double> matrix(const json& v, const std::string& key, std::size_t n) const {
    if (array(v, key).size() != n) fail(key, fmt::format("expected {} rows, got {}", n, v.size()));
    std::vector<double> out;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string row = fmt::format("{}[{}]", key, i);
      if (array(v[i], row).size() != n) fail(row, fmt::format("expected {} values, got {}", n, v[i].size()));
      for (std::size_t j = 0; j < n; ++j) out.push_back(number_or_inf(v[i][j], fmt::format("{}[{}]", row, j)));
    }
    return out;
  }
};

constexpr const char* kLogGpsKeys[] = {"L", "o", "Os", "Or", "g", "Gs", "Gl", "s", "S"};

LogGPSParams read_loggps(const Reader& r, const json& j) {
  for (const char* k : kLogGpsKeys)
    r.need(j, "", k, "missing (a LogGPS parameter file needs L, o, Os, Or, g, Gs, Gl, s and S)");
  LogGPSParams p;
  p.L = r.number(j["L"], "L", false);
  p.o = r.number(j["o"], "o", false);
  p.Os = r.number(j["Os"], "Os", false);
  p.Or = r.number(j["Or"], "Or", false);
  p.g = r.number(j["g"], "g", false);
  p.Gs = r.number(j["Gs"], "Gs", false);
  p.Gl = r.number(j["Gl"], "Gl", false);
  p.s = r.bytes(j["s"], "s", true);
  p.S = r.bytes(j["S"], "S", true);
  if (const json* P = r.find(j, "P")) p.P = r.processes(*P, "P");
  // Beyond MODELS.md, written by `mstep calibrate` since format 1 grew them; absent, the paper's.
  if (const json* H = r.find(j, "H")) p.H = r.number(*H, "H", false);
  if (const json* m = r.find(j, "rendezvous")) {
    const std::string name = r.text(*m, "rendezvous");
    if (name == "paper") p.rendezvous_model = RendezvousModel::Paper;
    else if (name == "delivered") p.rendezvous_model = RendezvousModel::Delivered;
    else r.fail("rendezvous", fmt::format("expected \"paper\" or \"delivered\", got \"{}\"", name));
  }
  if (const json* v = r.find(j, "rendezvous_push")) {
    if (!v->is_boolean()) r.fail("rendezvous_push", fmt::format("expected true or false, got {}", kind(*v)));
    p.rendezvous_push = v->get<bool>();
  }
  return p;
}

ColdStart read_cold(const Reader& r, const json& j) {
  r.object(j, "cold");
  ColdStart c;
  const std::uint64_t messages = r.bytes(r.need(j, "cold", "messages"), "cold.messages", false);
  if (messages > 0xffffffffu) r.fail("cold.messages", fmt::format("{} is too large", messages));
  c.messages = static_cast<std::uint32_t>(messages);
  c.send = r.number(r.need(j, "cold", "send"), "cold.send", false);
  c.recv = r.number(r.need(j, "cold", "recv"), "cold.recv", false);
  c.from = r.bytes(r.need(j, "cold", "from"), "cold.from", false);
  c.to = r.bytes(r.need(j, "cold", "to"), "cold.to", true);
  if (const json* v = r.find(j, "bytes")) c.bytes = r.bytes(*v, "cold.bytes", false);
  if (const json* v = r.find(j, "fresh_per_byte")) c.fresh_per_byte = r.number(*v, "cold.fresh_per_byte", false);
  if (const json* v = r.find(j, "fresh_from")) c.fresh_from = r.bytes(*v, "cold.fresh_from", true);
  return c;
}

MpmParams read_mpm(const Reader& r, const json& j) {
  MpmParams m;
  r.object(j, "mpm");
  m.g = r.number(r.need(j, "mpm", "g"), "mpm.g", false);  // seconds per byte: never negative
  m.L = r.number(r.need(j, "mpm", "L"), "mpm.L");
  if (const json* v = r.find(j, "residual")) m.residual = r.number(*v, "mpm.residual", false);
  if (const json* v = r.find(j, "combine")) {
    const std::string c = r.text(*v, "mpm.combine");
    if (c == "sum") m.combine = HCombine::Sum;
    else if (c == "max") m.combine = HCombine::Max;
    else r.fail("mpm.combine", fmt::format("expected \"sum\" or \"max\", got \"{}\"", c));
  }
  if (const json* v = r.find(j, "h")) m.h = r.numbers(*v, "mpm.h");
  if (const json* v = r.find(j, "patterns")) {
    for (const auto& [name, pj] : r.object(*v, "mpm.patterns").items()) {
      const std::string key = "mpm.patterns." + name;
      r.object(pj, key);
      MpmPattern p;
      p.name = name;
      p.g = r.number(r.need(pj, key, "g"), key + ".g");
      p.L = r.number(r.need(pj, key, "L"), key + ".L");
      if (const json* x = r.find(pj, "residual")) p.residual = r.number(*x, key + ".residual", false);
      if (const json* x = r.find(pj, "seconds")) {
        p.seconds = r.numbers(*x, key + ".seconds");
        if (p.seconds.size() != m.h.size())
          r.fail(key + ".seconds", fmt::format("expected one time per h ({}), got {}", m.h.size(), p.seconds.size()));
      }
      m.patterns.push_back(std::move(p));
    }
  }
  return m;
}

LinearCost read_line(const Reader& r, const json& j, const std::string& key, double& residual) {
  r.object(j, key);
  LinearCost c;
  c.T0 = r.number(r.need(j, key, "T0"), key + ".T0");
  c.B = r.number_or_inf(r.need(j, key, "B"), key + ".B");
  if (c.B == 0) out_of_range(r.file, key + ".B", "0");
  if (const json* v = r.find(j, "residual")) residual = r.number(*v, key + ".residual", false);
  return c;
}

LinearParams read_linear(const Reader& r, const json& j) {
  LinearParams l;
  r.object(j, "linear");
  l.model.boundary = r.bytes(r.need(j, "linear", "boundary"), "linear.boundary", true);
  l.model.below = read_line(r, r.need(j, "linear", "below"), "linear.below", l.residual_below);
  l.model.above = read_line(r, r.need(j, "linear", "above"), "linear.above", l.residual_above);
  return l;
}

BroadcastParams read_broadcast(const Reader& r, const json& j) {
  BroadcastParams b;
  r.object(j, "broadcast");
  b.bytes = r.bytes(r.need(j, "broadcast", "bytes"), "broadcast.bytes", false);
  const json& lambda = r.need(j, "broadcast", "lambda");
  const std::size_t n = r.array(lambda, "broadcast.lambda").size();
  b.network.nodes = n;
  b.network.latency = r.matrix(lambda, "broadcast.lambda", n);
  b.network.injection = r.matrix(r.need(j, "broadcast", "injection"), "broadcast.injection", n);
  return b;
}

void read_meta(const Reader& r, const json& j, ParamsMeta& m) {
  r.object(j, "meta");
  auto str = [&](const char* k, std::string& out) {
    if (const json* v = r.find(j, k)) out = r.text(*v, std::string("meta.") + k);
  };
  str("source", m.source), str("platform", m.platform), str("host", m.host);
  str("mpi_library", m.mpi_library), str("mpi_version", m.mpi_version), str("date", m.date);
  str("mode", m.mode);
  if (const json* v = r.find(j, "hosts"))
    for (std::size_t i = 0; i < r.array(*v, "meta.hosts").size(); ++i)
      m.hosts.push_back(r.text((*v)[i], fmt::format("meta.hosts[{}]", i)));
  if (const json* v = r.find(j, "processes"))
    m.processes = r.processes(*v, "meta.processes");
  if (const json* v = r.find(j, "pair"))
    for (double x : r.numbers(*v, "meta.pair")) m.pair.push_back(static_cast<int>(x));
  if (const json* v = r.find(j, "duration_s")) m.duration_s = r.number(*v, "meta.duration_s", false);
  if (const json* v = r.find(j, "half_rtt_8B")) m.half_rtt_8B = r.number(*v, "meta.half_rtt_8B", false);
  if (const json* v = r.find(j, "S_fit")) m.S_fit = r.bytes(*v, "meta.S_fit", true);
  if (const json* v = r.find(j, "probes_8B"))
    for (std::size_t i = 0; i < r.array(*v, "meta.probes_8B").size(); ++i) {
      const std::string where = fmt::format("meta.probes_8B[{}]", i);
      const json& probe = r.object((*v)[i], where);
      m.probes_8B.emplace_back(r.text(r.need(probe, where, "at"), where + ".at"),
                               r.number(r.need(probe, where, "half_rtt"), where + ".half_rtt", false));
    }
  if (const json* v = r.find(j, "residuals"))
    for (const auto& [k, x] : r.object(*v, "meta.residuals").items())
      m.residuals[k] = x.is_null() ? kInf : r.number(x, "meta.residuals." + k);
  if (const json* v = r.find(j, "environment"))
    for (const auto& [k, x] : r.object(*v, "meta.environment").items())
      m.environment[k] = r.text(x, "meta.environment." + k);
  if (const json* v = r.find(j, "notes"))
    for (std::size_t i = 0; i < r.array(*v, "meta.notes").size(); ++i)
      m.notes.push_back(r.text((*v)[i], fmt::format("meta.notes[{}]", i)));
}

void read_fits(const Reader& r, const json& j, std::vector<CurveSegment>& out) {
  for (const auto& [curve, list] : r.object(j, "fits").items()) {
    const std::string key = "fits." + curve;
    for (std::size_t i = 0; i < r.array(list, key).size(); ++i) {
      const std::string k = fmt::format("{}[{}]", key, i);
      const json& s = r.object(list[i], k);
      CurveSegment c;
      c.curve = curve;
      c.from = r.bytes(r.need(s, k, "from"), k + ".from", false);
      c.to = r.bytes(r.need(s, k, "to"), k + ".to", false);
      c.intercept = r.number(r.need(s, k, "intercept"), k + ".intercept");
      c.slope = r.number(r.need(s, k, "slope"), k + ".slope");
      if (const json* v = r.find(s, "residual")) c.residual = r.number(*v, k + ".residual", false);
      if (const json* v = r.find(s, "points")) c.points = r.bytes(*v, k + ".points", false);
      if (const json* v = r.find(s, "outliers")) c.outliers = r.bytes(*v, k + ".outliers", false);
      out.push_back(c);
    }
  }
}

void read_raw(const Reader& r, const json& j, std::vector<RawPoint>& out) {
  r.object(j, "raw");
  const json& b = r.need(j, "raw", "bytes");
  const std::size_t n = r.array(b, "raw.bytes").size();
  out.resize(n);
  for (std::size_t i = 0; i < n; ++i) out[i].bytes = r.bytes(b[i], fmt::format("raw.bytes[{}]", i), false);
  auto column = [&](const char* name, double RawPoint::*field) {
    const json* v = r.find(j, name);
    if (!v) return;
    const std::string key = std::string("raw.") + name;
    if (r.array(*v, key).size() != n) r.fail(key, fmt::format("expected {} values (one per size), got {}", n, v->size()));
    for (std::size_t i = 0; i < n; ++i) out[i].*field = r.number((*v)[i], fmt::format("{}[{}]", key, i));
  };
  column("half_rtt", &RawPoint::half_rtt);
  column("gap", &RawPoint::gap);
  column("send_overhead", &RawPoint::send_overhead);
  column("recv_overhead", &RawPoint::recv_overhead);
  column("late_send_wait", &RawPoint::late_send_wait);
  if (const json* v = r.find(j, "synchronous")) {
    if (r.array(*v, "raw.synchronous").size() != n) r.fail("raw.synchronous", fmt::format("expected {} values, got {}", n, v->size()));
    for (std::size_t i = 0; i < n; ++i) {
      if (!(*v)[i].is_boolean()) r.fail(fmt::format("raw.synchronous[{}]", i), fmt::format("expected a boolean, got {}", kind((*v)[i])));
      out[i].synchronous = (*v)[i].get<bool>();
    }
  }
}

}  // namespace

CalibrationParams parse_params(std::string_view text, const std::string& name) {
  const Reader r{name};
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse errors, and numbers beyond a double (1e999)
    std::string what = e.what();
    if (const auto p = what.find("] "); what.rfind("[json.exception", 0) == 0 && p != std::string::npos) what = what.substr(p + 2);
    throw ParamsError(fmt::format("{}: not valid JSON: {}", name, what));
  }
  if (!j.is_object()) throw ParamsError(fmt::format("{}: expected a JSON object, got {}", name, kind(j)));
  if (const json* v = r.find(j, "version")) {
    const std::uint64_t version = r.bytes(*v, "version", false);
    if (version > static_cast<std::uint64_t>(kParamsFormatVersion))
      r.fail("version", fmt::format("format version {} is newer than this mstep reads ({})", version, kParamsFormatVersion));
  }
  if (const json* v = r.find(j, "format"); v && (!v->is_string() || v->get<std::string>() != "mstep-params"))
    r.fail("format", fmt::format("expected \"mstep-params\", got {}", v->dump()));
  CalibrationParams p;
  bool any_loggps = false;
  for (const char* k : kLogGpsKeys) any_loggps = any_loggps || r.find(j, k);
  if (any_loggps) p.loggps = read_loggps(r, j);
  if (const json* v = r.find(j, "cold")) p.cold = read_cold(r, *v);
  if (const json* v = r.find(j, "mpm")) p.mpm = read_mpm(r, *v);
  if (const json* v = r.find(j, "linear")) p.linear = read_linear(r, *v);
  if (const json* v = r.find(j, "broadcast")) p.broadcast = read_broadcast(r, *v);
  if (const json* v = r.find(j, "collectives")) p.collectives = read_collective_times(*v, name);
  if (!p.loggps && !p.mpm && !p.linear)
    throw ParamsError(fmt::format("{}: no parameters: expected the LogGPS keys (L, o, Os, Or, g, Gs, "
                                  "Gl, s, S), an object 'mpm' or an object 'linear'", name));
  if (const json* v = r.find(j, "meta")) read_meta(r, *v, p.meta);
  if (p.loggps && p.meta.processes > 0 && !r.find(j, "P")) p.loggps->P = p.meta.processes;
  if (const json* v = r.find(j, "fits")) read_fits(r, *v, p.segments);
  if (const json* v = r.find(j, "raw")) read_raw(r, *v, p.raw);
  if (const json* v = r.find(j, "warnings"))
    for (std::size_t i = 0; i < r.array(*v, "warnings").size(); ++i)
      p.warnings.push_back(r.text((*v)[i], fmt::format("warnings[{}]", i)));
  check_params(p, name);
  return p;
}

CalibrationParams read_params(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::error_code ec;
    const bool exists = std::filesystem::exists(file, ec);
    throw ParamsError(fmt::format("{}: cannot read parameter file: {}", file.string(),
                                  exists ? "permission denied or not a file" : "no such file"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_params(text.str(), file.string());
}

}  // namespace mstep::model
