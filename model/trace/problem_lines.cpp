#include "model/trace/problem_lines.hpp"

#include <unordered_map>

#include <fmt/format.h>

namespace mstep {
namespace {

// The line with every run of digits made one '#': "pk/ranks-000001.msp@726195+352: too short"
// and "...@726547+353: too short" are the same kind. The digits of a pack file's name fold too, so
// the same problem in two packs is one kind; the example line says which pack it was last.
std::string kind_of(const std::string& line) {
  std::string key;
  key.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    const bool digit = line[i] >= '0' && line[i] <= '9';
    if (!digit) key += line[i];
    else if (i == 0 || line[i - 1] < '0' || line[i - 1] > '9') key += '#';
  }
  return key;
}

}  // namespace

std::vector<std::string> problem_lines(std::span<const std::string> problems, std::size_t per_kind) {
  struct Kind {
    std::size_t seen = 0;
    const std::string* last = nullptr;  // the last line past per_kind; null while none is
  };
  std::unordered_map<std::string, Kind> kinds;
  std::vector<std::string> out;
  std::vector<Kind*> elided;
  for (const std::string& p : problems) {
    Kind& k = kinds[kind_of(p)];
    if (++k.seen <= per_kind) {
      out.push_back(p);
      continue;
    }
    if (!k.last) elided.push_back(&k);
    k.last = &p;
  }
  for (const Kind* k : elided)
    out.push_back(fmt::format("{} more problem{} of the same kind, the last: {}", k->seen - per_kind,
                              k->seen - per_kind == 1 ? "" : "s", *k->last));
  return out;
}

}  // namespace mstep
