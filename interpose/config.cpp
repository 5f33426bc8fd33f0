#include "interpose/config.hpp"

#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

namespace mstep {
namespace {

bool parse_size(const char* s, std::size_t& out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s) return false;
  std::size_t mult = 1;
  if (*end == 'k' || *end == 'K') mult = 1024, ++end;
  else if (*end == 'm' || *end == 'M') mult = 1024 * 1024, ++end;
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return false;
  out = static_cast<std::size_t>(v) * mult;
  return true;
}

bool parse_int(const char* s, int lo, int hi, int& out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < lo || v > hi) return false;
  out = static_cast<int>(v);
  return true;
}

// A setting that names one of three choices: `out` set, or `error` says which were allowed
// ("MSTEP_WRITER='x' is not auto, thread or inline").
template <class E>
void parse_choice(const char* variable, const std::array<std::pair<const char*, E>, 3>& choices, E& out,
                  std::string& error) {
  const char* v = std::getenv(variable);
  if (!v) return;
  for (const auto& [name, value] : choices)
    if (std::strcmp(v, name) == 0) {
      out = value;
      return;
    }
  error = std::string(variable) + "='" + v + "' is not " + choices[0].first + ", " + choices[1].first + " or " +
          choices[2].first;
}

}  // namespace

Config read_config() {
  Config c;
  if (const char* v = std::getenv("MSTEP_ENABLE"))
    c.enabled = !(std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0 || std::strcmp(v, "no") == 0);
  if (const char* v = std::getenv("MSTEP_DIR")) c.dir = v;
  if (const char* v = std::getenv("MSTEP_STACK_DEPTH"); v && !parse_int(v, 1, 32, c.stack_depth))
    c.error = std::string("MSTEP_STACK_DEPTH='") + v + "' is not a number from 1 to 32";
  if (const char* v = std::getenv("MSTEP_BUFFER")) {
    std::size_t b = 0;
    if (!parse_size(v, b) || b < 4096 || b > (std::size_t{1} << 30))
      c.error = std::string("MSTEP_BUFFER='") + v + "' is not a size from 4k to 1024M";
    else
      c.buffer_bytes = b;
  }
  if (const char* v = std::getenv("MSTEP_ZSTD_LEVEL"); v && !parse_int(v, 1, 19, c.zstd_level))
    c.error = std::string("MSTEP_ZSTD_LEVEL='") + v + "' is not a number from 1 to 19";
  using Writer = Config::Writer;
  using Compress = Config::Compress;
  parse_choice<Writer>("MSTEP_WRITER", {{{"auto", Writer::Auto}, {"thread", Writer::Thread}, {"inline", Writer::Inline}}},
                       c.writer, c.error);
  parse_choice<Compress>("MSTEP_COMPRESS", {{{"auto", Compress::Auto}, {"now", Compress::Now}, {"later", Compress::Later}}},
                         c.compress, c.error);
  return c;
}

}  // namespace mstep
