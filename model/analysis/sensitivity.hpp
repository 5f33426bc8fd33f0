// Martin's sensitivity experiment (MODELS.md section 5) with the models beside it: a program is
// run under the delay apparatus (interpose/delay.hpp) at several values of one added parameter,
// and each measured slowdown is set against each model's predicted slowdown, from the baseline
// trace replayed with that parameter raised by the same amount (the what-if of `mstep whatif`).
//
// What an added parameter means to each model (the apparatus's delays in the models' terms):
//   L: LogGPS L + v; MPM/BSPWB L + v (one message latency a step); linear T0 + v.
//   o: LogGPS o + v; MPM/BSPWB L + 2v (a message pays o at both ends); linear T0 + 2v.
//   g: LogGPS g + v; MPM, BSPWB and linear have no gap and stay as they are.
//   G: LogGPS Gs + v and Gl + v (the apparatus puts a k-byte message's k*v on the wire, eager or
//      rendezvous); MPM/BSPWB g + v; linear 1/B + v.
// Pure: no I/O, no processes (`mstep sensitivity` runs the program, tools/mstep/cmd_sensitivity.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/analysis/whatif.hpp"
#include "model/params/params.hpp"

namespace mstep::model {

enum class SweepParam { L, o, g, G };

struct Sweep {
  SweepParam param = SweepParam::L;
  std::vector<double> values;       // added amounts, SI (seconds; seconds per byte for G)
  std::vector<std::string> labels;  // as given, e.g. "5us"
};

// "L=0,5us,10us" -> L with three values. WhatIfError (one line) on a bad name, value or unit,
// a negative value, or an empty list.
Sweep parse_sweep(std::string_view text);

std::string_view sweep_name(SweepParam p);      // "L", "o", "g", "G"
std::string_view delay_variable(SweepParam p);  // "MSTEP_DELAY_L", ...

// `base` with `added` of `p` added in every model's terms (above); the changes say what moved.
EditedParams add_to_params(const CalibrationParams& base, SweepParam p, double added);

// One point of the sweep: the measured run and each model's prediction for it.
struct SensitivityPoint {
  std::string label;
  double added = 0;
  double actual_s = 0;                   // measured, under the apparatus
  std::vector<ModelComparison> models;   // baseline_s: the model on the baseline trace; whatif_s: raised
};

// Measured slowdown actual(point) / actual(baseline run), and a model's predicted one,
// whatif_s / baseline_s; relative error of the prediction, 100 * (predicted - measured) / measured.
double slowdown(double base_s, double s);
double slowdown_error_pct(double measured, double predicted);

// The measured slowdown with the apparatus's own cost taken out: 1 + (s - zero_s) / base_s, where
// zero_s is the run under the apparatus armed at the sweep's 0 point (carrying every message's
// send time costs a second message: MODELS.md section 5, the intercept of Martin's calibration
// lines). What the parameter added, over the baseline run's time: the models' side has no
// apparatus. NaN where base_s is not positive.
double apparatus_slowdown(double base_s, double s, double zero_s);

}  // namespace mstep::model
