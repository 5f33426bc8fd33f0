// The delay apparatus's settings as text: times and times per byte with units (no MPI).
#pragma once

namespace mstep {

// "12.5us" -> 12.5e-6 ("ns", "us", "ms", "s"; a bare number is seconds). False if malformed.
bool parse_delay_time(const char* text, double& seconds);
// "2ns/B", "0.5ns" (per byte), "1ps/B". False if malformed.
bool parse_delay_per_byte(const char* text, double& seconds_per_byte);

}  // namespace mstep
