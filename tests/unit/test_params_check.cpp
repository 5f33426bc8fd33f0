// Parameter files with values out of range: each refused in one line naming the file, the key,
// the value and the allowed range with its unit.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "model/params/params.hpp"

using namespace mstep::model;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_params(text, "p.json");
  } catch (const ParamsError& e) {
    return e.what();
  }
  return "(no error)";
}

// A valid LogGPS file with one key replaced.
std::string loggps_with(const std::string& key, const std::string& value) {
  std::vector<std::pair<std::string, std::string>> keys = {{"L", "3e-6"}, {"o", "1e-6"}, {"Os", "0"}, {"Or", "0"}, {"g", "1e-6"},
                                                           {"Gs", "1e-10"}, {"Gl", "1e-10"}, {"s", "1024"}, {"S", "65536"}};
  std::string text = "{";
  for (auto& [k, v] : keys) text += "\"" + k + "\": " + (k == key ? value : v) + ", ";
  return text + "\"format\": \"mstep-params\"}";
}

}  // namespace

TEST_CASE("parameter values out of range are refused with the key, value and range", "[params]") {
  CHECK(error_of(loggps_with("L", "3e-6")) == "(no error)");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {loggps_with("L", "-1e-6"), "p.json: key 'L': -1e-06 is out of range: expected seconds, finite and >= 0"},
      // Beyond a double: the JSON reader refuses it (it once escaped as an uncaught exception).
      {loggps_with("L", "1e999"), "p.json: not valid JSON: number overflow parsing '1e999'"},
      {loggps_with("o", "-2"), "p.json: key 'o': -2 is out of range: expected seconds, finite and >= 0"},
      {loggps_with("g", "-1"), "p.json: key 'g': -1 is out of range: expected seconds, finite and >= 0"},
      {loggps_with("Gs", "-1e-9"), "p.json: key 'Gs': -1e-09 is out of range: expected seconds per byte, finite and >= 0"},
      {loggps_with("s", "100000"), "p.json: key 's': 100000 is out of range: expected bytes <= S (65536)"},
      {R"({"L": 0, "o": 0, "Os": 0, "Or": 0, "g": 0, "Gs": 0, "Gl": 0, "s": null, "S": null})",
       "p.json: key 'L': 0 is out of range: expected seconds > 0 when o, g, Os, Or, Gs and Gl are 0 too (a machine "
       "whose messages cost nothing)"},
      {R"({"mpm": {"g": 0, "L": 0}})",
       "p.json: key 'mpm.g': 0 is out of range: expected seconds per byte > 0 when mpm.L is 0 too (steps that cost nothing)"},
      {R"({"mpm": {"g": -1e-9, "L": 1e-6}})",
       "p.json: key 'mpm.g': -1e-09 is out of range: expected seconds per byte, finite and >= 0"},
      {R"({"mpm": {"g": 1e-9, "L": -1e999}})", "p.json: not valid JSON: number overflow parsing '-1e999'"},
      {R"({"linear": {"boundary": 8, "below": {"T0": 1e-6, "B": -5}, "above": {"T0": 1e-6, "B": null}}})",
       "p.json: key 'linear.below.B': -5 is out of range: expected bytes per second, > 0 (null for infinite)"},
      {R"({"mpm": {"g": 1e-9, "L": 1e-6}, "cold": {"messages": 2, "send": -1, "recv": 0, "from": 0, "to": null}})",
       "p.json: key 'cold.send': -1 is out of range: expected seconds, finite and >= 0"},
      {R"({"format": "eztrace", "mpm": {"g": 1e-9, "L": 1e-6}})",
       "p.json: key 'format': expected \"mstep-params\", got \"eztrace\""},
      {R"({"format": 3, "mpm": {"g": 1e-9, "L": 1e-6}})", "p.json: key 'format': expected \"mstep-params\", got 3"},
  };
  for (const auto& [text, message] : bad) {
    INFO(text);
    CHECK(error_of(text) == message);
  }
}

TEST_CASE("the published MPM presets with a negative L still load", "[params]") {
  // Roda et al. 1999, Table 2, prints negative L for the Cray T3E and the Origin 2000: the
  // shipped presets keep them as printed.
  CHECK(parse_params(R"({"format": "mstep-params", "mpm": {"g": 7.3e-9, "L": -2.11e-5}})", "t3e.json").mpm->L == -2.11e-5);
}
