#include "interpose/config.hpp"

#include <cstdlib>
#include <cstring>

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
  if (const char* v = std::getenv("MSTEP_WRITER")) {
    if (std::strcmp(v, "auto") == 0)
      c.writer = Config::Writer::Auto;
    else if (std::strcmp(v, "thread") == 0)
      c.writer = Config::Writer::Thread;
    else if (std::strcmp(v, "inline") == 0)
      c.writer = Config::Writer::Inline;
    else
      c.error = std::string("MSTEP_WRITER='") + v + "' is not auto, thread or inline";
  }
  if (const char* v = std::getenv("MSTEP_COMPRESS")) {
    if (std::strcmp(v, "auto") == 0)
      c.compress = Config::Compress::Auto;
    else if (std::strcmp(v, "now") == 0)
      c.compress = Config::Compress::Now;
    else if (std::strcmp(v, "later") == 0)
      c.compress = Config::Compress::Later;
    else
      c.error = std::string("MSTEP_COMPRESS='") + v + "' is not auto, now or later";
  }
  return c;
}

}  // namespace mstep
