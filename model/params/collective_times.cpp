#include "model/params/collective_times.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/params/params.hpp"
#include "model/trace/substitutes.hpp"

namespace mstep::model {

namespace {

// times - model at m bytes, linear between the sizes and along the nearest segment beyond them.
double interpolate_excess(const std::vector<std::uint64_t>& bytes, const std::vector<double>& times,
                          const std::vector<double>& model, std::uint64_t m) {
  const std::size_t n = bytes.size();
  if (n == 0 || times.size() != n) return 0;
  auto at = [&](std::size_t i) { return times[i] - model[i]; };
  if (n == 1) return at(0);
  std::size_t i = 1;  // the segment [i - 1, i] holding m, or the nearest one
  while (i + 1 < n && bytes[i] < m) ++i;
  const double x0 = static_cast<double>(bytes[i - 1]), x1 = static_cast<double>(bytes[i]);
  const double t = (static_cast<double>(m) - x0) / (x1 - x0);
  return at(i - 1) + t * (at(i) - at(i - 1));
}

}  // namespace

double CollectiveTimes::residual(std::uint64_t m) const { return interpolate_excess(bytes, measured_s, model_s, m); }

double CollectiveTimes::residual_after(std::uint64_t m, double gap) const {
  const double back_to_back = residual(m);
  if (!has_isolated() || !(gap > 0)) return back_to_back;
  return residual_for_gap(back_to_back, interpolate_excess(bytes, isolated_measured_s, isolated_model_s, m), gap,
                          isolated_gap_s);
}

double CollectiveTimes::substitute_residual(std::uint64_t m) const {
  return interpolate_excess(bytes, substitute_s, model_s, m);
}

double CollectiveTimes::substitute_residual_after(std::uint64_t m, double gap) const {
  const double back_to_back = substitute_residual(m);
  if (!has_substitute_isolated() || !(gap > 0)) return back_to_back;
  return residual_for_gap(back_to_back, interpolate_excess(bytes, substitute_isolated_s, isolated_model_s, m), gap,
                          isolated_gap_s);
}

bool libmstep_has_substitute(Op op) { return substitute_family(op) != nullptr; }

int set_substitute_times(CollectiveTable& table, const CollectiveTable& substitutes_preloaded, double recorder_s) {
  const double recorder = std::isfinite(recorder_s) ? std::max(0.0, recorder_s) : 0.0;
  int operations = 0;
  for (auto& [op, t] : table) {
    const auto it = substitutes_preloaded.find(op);
    if (it == substitutes_preloaded.end() || !libmstep_has_substitute(op)) continue;
    const CollectiveTimes& b = it->second;
    if (b.bytes != t.bytes || b.measured_s.size() != t.bytes.size()) continue;
    t.substitute_s.clear();
    for (const double s : b.measured_s) t.substitute_s.push_back(std::max(0.0, s - recorder));
    t.substitute_isolated_s.clear();
    if (t.has_isolated() && b.isolated_measured_s.size() == t.bytes.size())
      for (const double s : b.isolated_measured_s) t.substitute_isolated_s.push_back(std::max(0.0, s - recorder));
    ++operations;
  }
  return operations;
}

double mpich_barrier_round_s(const CollectiveTable& table) {
  const auto it = table.find(Op::Barrier);
  return it == table.end() ? 0.0 : it->second.residual(0);
}

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& key, const std::string& what) {
  throw ParamsError(fmt::format("{}: key '{}': {}", file, key, what));
}

std::vector<double> seconds(const nlohmann::json& v, const std::string& file, const std::string& key) {
  if (!v.is_array()) fail(file, key, fmt::format("expected an array of seconds, got {}", v.dump()));
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number() || !std::isfinite(v[i].get<double>()) || v[i].get<double>() < 0)
      fail(file, fmt::format("{}[{}]", key, i), fmt::format("{} is out of range: expected seconds >= 0", v[i].dump()));
    out.push_back(v[i].get<double>());
  }
  return out;
}

// `obj`'s measured_s and model_s (required) and substitute_s (optional), seconds per size: the
// loops' fields, back to back (an operation's) and isolated (its "isolated").
void per_size_seconds(const nlohmann::json& obj, const std::string& file, const std::string& key, std::size_t sizes,
                      std::vector<double>& measured, std::vector<double>& model, std::vector<double>& substitute) {
  for (const char* field : {"measured_s", "model_s", "substitute_s"}) {
    const bool optional = std::string_view(field) == "substitute_s";
    const auto f = obj.find(field);
    if (f == obj.end()) {
      if (optional) continue;
      fail(file, key + "." + field, "missing");
    }
    auto s = seconds(*f, file, key + "." + field);
    if (s.size() != sizes) fail(file, key + "." + field, fmt::format("has {} values for {} sizes", s.size(), sizes));
    (std::string_view(field) == "measured_s" ? measured : optional ? substitute : model) = std::move(s);
  }
}

}  // namespace

CollectiveTable read_collective_times(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) fail(file, "collectives", fmt::format("expected an object, got {}", j.dump()));
  CollectiveTable table;
  for (const auto& [name, v] : j.items()) {
    const std::string key = "collectives." + name;
    std::optional<Op> op;
    for (int i = 0; i < kOpCount; ++i)
      if (mpi_name(static_cast<Op>(i)) == name) op = static_cast<Op>(i);
    const Role role = op ? op_role(*op) : Role::Other;
    if (!op || is_nonblocking_collective(*op) ||
        (role != Role::CollAll && role != Role::CollRootIn && role != Role::CollRootOut && *op != Op::Sendrecv &&
                                    *op != Op::Waitall))
      fail(file, key, "not a blocking collective mstep records (MPI_Barrier, MPI_Bcast, ...), MPI_Sendrecv nor MPI_Waitall");
    if (!v.is_object()) fail(file, key, fmt::format("expected an object, got {}", v.dump()));
    CollectiveTimes t;
    const auto b = v.find("bytes");
    if (b == v.end() || !b->is_array() || b->empty()) fail(file, key + ".bytes", "expected a non-empty array of sizes");
    for (std::size_t i = 0; i < b->size(); ++i) {
      const auto& x = (*b)[i];
      if (!x.is_number_unsigned() || (i > 0 && x.get<std::uint64_t>() <= t.bytes.back()))
        fail(file, fmt::format("{}.bytes[{}]", key, i), fmt::format("{} is out of range: expected increasing sizes", x.dump()));
      t.bytes.push_back(x.get<std::uint64_t>());
    }
    per_size_seconds(v, file, key, t.bytes.size(), t.measured_s, t.model_s, t.substitute_s);
    if (const auto iso = v.find("isolated"); iso != v.end()) {
      const std::string ikey = key + ".isolated";
      if (!iso->is_object()) fail(file, ikey, fmt::format("expected an object, got {}", iso->dump()));
      const auto gap = iso->find("gap_s");
      if (gap == iso->end() || !gap->is_number() || !std::isfinite(gap->get<double>()) || gap->get<double>() <= 0 ||
          gap->get<double>() > 1)
        fail(file, ikey + ".gap_s", "expected seconds of computation before each call, above 0 and at most 1");
      t.isolated_gap_s = gap->get<double>();
      per_size_seconds(*iso, file, ikey, t.bytes.size(), t.isolated_measured_s, t.isolated_model_s, t.substitute_isolated_s);
      for (const auto& [k, unused] : iso->items())
        if (k != "gap_s" && k != "measured_s" && k != "model_s" && k != "substitute_s")
          fail(file, ikey + "." + k, "unknown key (gap_s, measured_s, model_s, substitute_s)");
    }
    for (const auto& [k, unused] : v.items())
      if (k != "bytes" && k != "measured_s" && k != "model_s" && k != "substitute_s" && k != "isolated")
        fail(file, key + "." + k, "unknown key (bytes, measured_s, model_s, substitute_s, isolated)");
    table[*op] = std::move(t);
  }
  return table;
}

nlohmann::ordered_json collective_times_json(const CollectiveTable& table) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [op, t] : table) {
    j[mpi_name(op)] = nlohmann::ordered_json{{"bytes", t.bytes}, {"measured_s", t.measured_s}, {"model_s", t.model_s}};
    if (!t.substitute_s.empty()) j[mpi_name(op)]["substitute_s"] = t.substitute_s;
    if (t.has_isolated())
      j[mpi_name(op)]["isolated"] = nlohmann::ordered_json{
          {"gap_s", t.isolated_gap_s}, {"measured_s", t.isolated_measured_s}, {"model_s", t.isolated_model_s}};
    if (t.has_substitute_isolated()) j[mpi_name(op)]["isolated"]["substitute_s"] = t.substitute_isolated_s;
  }
  return j;
}

}  // namespace mstep::model
