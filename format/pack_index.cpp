#include "format/pack_index.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "format/codec.hpp"

namespace mstep {
namespace {

constexpr char kMagic[8] = {'M', 'S', 'T', 'P', 'A', 'C', 'K', '1'};
constexpr std::size_t kEntryBytes = 4 + 8 + 8;

}  // namespace

std::string pack_file_name(std::uint32_t pack) { return fmt::format("ranks-{:06}.msp", pack); }

void write_pack_index(const std::string& path, std::span<const PackEntry> entries) {
  std::vector<std::uint8_t> out(std::begin(kMagic), std::end(kMagic));
  out.reserve(16 + entries.size() * kEntryBytes);
  ByteWriter w(out);
  w.fixed(entries.size(), 8);
  for (const PackEntry& e : entries) {
    w.fixed(e.pack, 4);
    w.fixed(e.offset, 8);
    w.fixed(e.length, 8);
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  f.close();
  if (!f) throw TraceError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
}

std::vector<PackEntry> read_pack_index(const std::string& path, std::uint64_t ranks) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw TraceError(fmt::format("{}: missing or unreadable (a packed trace needs it)", path));
  const std::vector<std::uint8_t> in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (in.size() < 16 || std::memcmp(in.data(), kMagic, sizeof kMagic) != 0)
    throw TraceError(fmt::format("{}: not a pack index", path));
  ByteReader r(in);
  r.bytes(sizeof kMagic);
  const std::uint64_t n = r.fixed(8);
  if (n != ranks) throw TraceError(fmt::format("{}: {} ranks, meta.json says {}", path, n, ranks));
  if (r.remaining() / kEntryBytes < n || r.remaining() % kEntryBytes != 0)
    throw TraceError(fmt::format("{}: cut short: {} bytes for {} ranks", path, in.size(), n));
  std::vector<PackEntry> out(n);
  for (PackEntry& e : out) {
    e.pack = static_cast<std::uint32_t>(r.fixed(4));
    e.offset = r.fixed(8);
    e.length = r.fixed(8);
  }
  return out;
}

}  // namespace mstep
