// The allowed values of a parameter file, beyond its types: each key's range with its unit, and
// the checks that tie keys together (s <= S, a machine that costs something). Kept apart from
// the reader (params.cpp) so that the ranges are in one place.
#pragma once

#include <string>
#include <string_view>

#include "model/params/params.hpp"

namespace mstep::model {

// The allowed range of a (dotted) key in words, with its unit: "seconds, finite and >= 0".
std::string allowed_range(std::string_view key);

// "FILE: key 'KEY': VALUE is out of range: expected RANGE" as a ParamsError.
[[noreturn]] void out_of_range(const std::string& file, std::string_view key, std::string_view value);

// The checks between keys of a parsed file; ParamsError naming the key on the first failure.
void check_params(const CalibrationParams& p, const std::string& file);

}  // namespace mstep::model
