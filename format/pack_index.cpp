#include "format/pack_index.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "format/codec.hpp"

namespace mstep {
namespace {

constexpr char kMagic[8] = {'M', 'S', 'T', 'P', 'A', 'C', 'K', '1'};
constexpr std::size_t kEntryBytes = 4 + 8 + 8;

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t get(const std::string& in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{static_cast<unsigned char>(in[at + static_cast<std::size_t>(i)])} << (8 * i);
  return v;
}

}  // namespace

std::string pack_file_name(std::uint32_t pack) { return fmt::format("ranks-{:06}.msp", pack); }

void write_pack_index(const std::string& path, std::span<const PackEntry> entries) {
  std::string out(kMagic, sizeof kMagic);
  put(out, entries.size(), 8);
  out.reserve(out.size() + entries.size() * kEntryBytes);
  for (const PackEntry& e : entries) {
    put(out, e.pack, 4);
    put(out, e.offset, 8);
    put(out, e.length, 8);
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  f.close();
  if (!f) throw TraceError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
}

std::vector<PackEntry> read_pack_index(const std::string& path, std::uint64_t ranks) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw TraceError(fmt::format("{}: missing or unreadable (a packed trace needs it)", path));
  const std::string in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (in.size() < 16 || std::memcmp(in.data(), kMagic, sizeof kMagic) != 0)
    throw TraceError(fmt::format("{}: not a pack index", path));
  const std::uint64_t n = get(in, 8, 8);
  if (n != ranks) throw TraceError(fmt::format("{}: {} ranks, meta.json says {}", path, n, ranks));
  if ((in.size() - 16) / kEntryBytes < n || (in.size() - 16) % kEntryBytes != 0)
    throw TraceError(fmt::format("{}: cut short: {} bytes for {} ranks", path, in.size(), n));
  std::vector<PackEntry> out(n);
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t at = 16 + r * kEntryBytes;
    out[r] = PackEntry{static_cast<std::uint32_t>(get(in, at, 4)), get(in, at + 4, 8), get(in, at + 12, 8)};
  }
  return out;
}

}  // namespace mstep
