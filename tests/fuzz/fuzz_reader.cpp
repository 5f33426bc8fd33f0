// libFuzzer target for the trace reader: any bytes given as a rank file, or as the payload of any
// frame kind, must end in a TraceError or a clean result — never a crash, a hang or a huge
// allocation. Built with clang (-fsanitize=fuzzer,address,undefined) when clang is there.
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

#include "format/codec.hpp"
#include "format/rank_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mstep;
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  // The first byte picks what the rest is.
  try {
    switch (data[0] % 7) {
      case 0: { std::vector<Event> v; decode_events(rest, v); break; }
      case 1: { std::vector<StepRecord> v; decode_steps(rest, v); break; }
      case 2: { std::vector<CommDef> v; decode_comms(rest, v, 1u << 20); break; }
      case 3: { std::vector<CallsiteDef> v; decode_callsites(rest, v); break; }
      case 4: { std::vector<ClockSync> v; decode_clocks(rest, v); break; }
      case 5: { ByteReader r(rest); decode_file_header(r); break; }
      default: {
        // A whole rank file: a valid header followed by the fuzzer's bytes as frames.
        static const std::string path = "/tmp/mstep-fuzz-" + std::to_string(::getpid()) + ".mst";
        std::vector<std::uint8_t> file;
        FileHeader h;
        h.world_size = 2;
        encode_file_header(h, file);
        file.insert(file.end(), rest.begin(), rest.end());
        if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
          std::fwrite(file.data(), 1, file.size(), f);
          std::fclose(f);
          (void)read_rank_trace(path);
        }
      }
    }
  } catch (const TraceError&) {
  }
  return 0;
}
