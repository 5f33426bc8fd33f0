#include "format/delay_pairs.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/delay_units.hpp"

namespace mstep {
namespace {

// A time: a number of seconds or a string with a unit. False if neither (or negative).
bool time_of(const nlohmann::json& v, double& seconds) {
  if (v.is_number()) {
    seconds = v.get<double>();
    return std::isfinite(seconds) && seconds >= 0;
  }
  return v.is_string() && parse_delay_time(v.get<std::string>().c_str(), seconds);
}

std::int64_t to_ns(double s) { return std::llround(s * 1e9); }

}  // namespace

PairLatency PairLatency::parse(const std::string& text, int world_size, std::string& error) {
  PairLatency p;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception&) {
    error = "not JSON";
    return {};
  }
  if (!j.is_object() || j.contains("clusters") == j.contains("matrix")) {
    error = "expected an object with \"clusters\" (and \"intra\", \"inter\") or \"matrix\"";
    return {};
  }
  const auto n = static_cast<std::size_t>(world_size);
  nlohmann::json out;
  if (j.contains("clusters")) {
    double intra = 0, inter = 0;
    if (!j.contains("inter") || !time_of(j.at("inter"), inter) || (j.contains("intra") && !time_of(j.at("intra"), intra))) {
      error = "\"inter\" (and \"intra\", if given) must be times, e.g. \"200us\"";
      return {};
    }
    p.cluster_.assign(n, -1);
    const auto& clusters = j.at("clusters");
    if (!clusters.is_array()) {
      error = "\"clusters\" must be a list of lists of ranks";
      return {};
    }
    for (std::size_t c = 0; c < clusters.size(); ++c) {
      if (!clusters[c].is_array()) {
        error = "\"clusters\" must be a list of lists of ranks";
        return {};
      }
      for (const auto& r : clusters[c]) {
        const long rank = r.is_number_integer() ? r.get<long>() : -1;
        if (rank < 0 || rank >= world_size || p.cluster_[static_cast<std::size_t>(rank)] >= 0) {
          error = fmt::format("cluster {}: {} is not a rank of 0..{} in no other cluster", c, r.dump(), world_size - 1);
          return {};
        }
        p.cluster_[static_cast<std::size_t>(rank)] = static_cast<int>(c);
      }
    }
    for (std::size_t r = 0; r < n; ++r)
      if (p.cluster_[r] < 0) {
        error = fmt::format("rank {} is in no cluster", r);
        return {};
      }
    p.intra_ns_ = to_ns(intra), p.inter_ns_ = to_ns(inter);
    out = {{"clusters", clusters}, {"intra", intra}, {"inter", inter}};
  } else {
    const auto& m = j.at("matrix");
    if (!m.is_array() || m.size() != n) {
      error = fmt::format("\"matrix\" must have {} rows (one per rank)", world_size);
      return {};
    }
    p.matrix_.resize(n * n);
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t a = 0; a < n; ++a) {
      if (!m[a].is_array() || m[a].size() != n) {
        error = fmt::format("\"matrix\" row {} must have {} entries", a, world_size);
        return {};
      }
      nlohmann::json row = nlohmann::json::array();
      for (std::size_t b = 0; b < n; ++b) {
        double s = 0;
        if (!time_of(m[a][b], s)) {
          error = fmt::format("\"matrix\" row {} entry {}: {} is not a time", a, b, m[a][b].dump());
          return {};
        }
        p.matrix_[a * n + b] = to_ns(s);
        row.push_back(s);
      }
      rows.push_back(row);
    }
    out = {{"matrix", rows}};
  }
  p.n_ = world_size;
  p.json_ = out.dump();
  return p;
}

PairLatency PairLatency::read(const std::string& path, int world_size, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read it";
    return {};
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), world_size, error);
}

}  // namespace mstep
