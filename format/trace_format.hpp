// The mstep trace format: the records both the writer (libmstep.so) and the reader (mstep) use.
// share/trace-format.md documents the bytes on disk; this header is the code of that document.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/member_list.hpp"

namespace mstep {

// Bump on any change to the bytes on disk. Readers refuse other versions with a clear message.
// Version 2: a communicator whose members are 0..n-1 is written as n alone (Comms frames).
// Version 3: a step whose rank heard every member of a communicator of kListedMembers or more says
// so by the communicator's id instead of listing them (Steps frames; StepRecord::whole_comm).
// Version 4: no Steps frames; the record that closes an M-step carries kClosesStep (the recorder's
// run-time decision), and the reader derives each step from the records (StepTracker).
inline constexpr std::uint16_t kTraceVersion = 4;
inline constexpr std::uint16_t kOldestTraceVersion = 1;  // the oldest the reader still accepts
// Whether a file of `version` marks the records that close M-steps (and has no Steps frames).
inline constexpr bool marks_steps(std::uint16_t version) { return version >= 4; }
inline constexpr char kFileMagic[8] = {'M', 'S', 'T', 'E', 'P', 'T', 'R', 'C'};
inline constexpr std::uint32_t kFrameMagic = 0x4d534652;  // "MSFR"

// What an operation means for M-step inference (MODELS.md section 1).
enum class Role : std::uint8_t {
  Other,        // no message of its own (Init, Probe, communicator management)
  Send,         // blocking send: send side at its start
  Recv,         // blocking receive: receive side at its completion
  Isend,        // nonblocking send: send side at its start
  Irecv,        // nonblocking receive posted: nothing until a Wait/Test completes it
  Complete,     // Wait/Test family: receive side for every receive request it completes
  SendRecv,     // send side at start, receive side at completion
  CollRootOut,  // Bcast/Scatter: root sends, the others receive from the root
  CollRootIn,   // Reduce/Gather: the others send, the root receives from all
  CollAll,      // Barrier, All*: everybody sends and receives
  Tool,         // time the tool itself spent (trace flush): not MPI, not computation
  Start,        // a persistent request's Start: the Isend or Irecv it starts (see event_role)
};

enum class Op : std::uint8_t {
#define MSTEP_OP(name, role) name,
#include "format/ops.def"
#undef MSTEP_OP
  Count_
};
inline constexpr int kOpCount = static_cast<int>(Op::Count_);

std::string_view op_name(Op op);      // "Send" (without the MPI_ prefix)
std::string mpi_name(Op op);          // "MPI_Send"; "mstep_flush" for ToolFlush

inline constexpr std::array<Role, kOpCount> kOpRoles = {
#define MSTEP_OP(name, role) Role::role,
#include "format/ops.def"
#undef MSTEP_OP
};
// Inline: the step tracker asks it for every record, in the recorder's flush too.
inline Role op_role(Op op) {
  const auto i = static_cast<std::size_t>(op);
  return i < kOpRoles.size() ? kOpRoles[i] : Role::Other;
}
// Inline: the decoder asks it for every record.
inline bool op_valid(std::uint8_t code) { return code < kOpCount; }

// Event flags.
enum EventFlag : std::uint8_t {
  kContinuation = 1u << 0,  // another record of the same call as the previous event (same times)
  kRecvHalf = 1u << 1,      // this record is a receive (Sendrecv's second half, a completed Irecv)
  kRoot = 1u << 2,          // collectives: this rank is the root
  kIncomplete = 1u << 3,    // Test*/Iprobe that found nothing
  kCollDone = 1u << 4,      // Wait/Test record completing a nonblocking collective's request
  kSyncMode = 1u << 5,      // a Start of a send made by MPI_Ssend_init (synchronous, as MPI_Issend)
  kBufferedMode = 1u << 6,  // a Start of a send made by MPI_Bsend_init (buffered, as MPI_Ibsend)
  kClosesStep = 1u << 7,    // version 4: the record closes the open M-step (StepMarker)
};

inline constexpr std::int32_t kNoPeer = -1;   // MPI_PROC_NULL, or no partner
inline constexpr std::int32_t kAnySource = -2;  // a posted MPI_ANY_SOURCE receive (Irecv records)
inline constexpr std::int32_t kNoTag = -1;
// The tag of a neighbourhood collective's messages: no user tag is negative, so its messages
// pair only with each other (in call order, as MPI orders collectives on a communicator).
inline constexpr std::int32_t kNeighborTag = -3;

// One record of an MPI call, as the wrapper saw it. A call that moves several messages (Sendrecv,
// Waitall) writes one record per message; the records after the first carry kContinuation.
struct Event {
  std::uint64_t t_enter = 0;     // clock ticks (see ClockSync)
  std::uint64_t t_exit = 0;
  std::uint64_t send_bytes = 0;  // bytes this rank sent in this record
  std::uint64_t recv_bytes = 0;  // bytes this rank received in this record
  std::uint32_t request = 0;     // request id (Isend/Irecv create, Wait/Test complete); 0: none
  std::uint32_t callsite = 0;    // index into the call-site table; 0: unknown
  std::int32_t peer = kNoPeer;   // world rank: destination, actual source, or collective root
  std::int32_t tag = kNoTag;     // actual tag for receives
  std::uint16_t comm = 0;        // communicator id (0 is MPI_COMM_WORLD), see CommDef
  Op op = Op::Init;
  std::uint8_t flags = 0;

  bool continuation() const { return flags & kContinuation; }
  friend bool operator==(const Event&, const Event&) = default;
};

// What one record means for M-step inference and the models: its operation's role, except that
// a persistent request's Start is the nonblocking send or receive (kRecvHalf) it starts.
inline Role event_role(const Event& e) {
  const Role r = op_role(e.op);
  if (r != Role::Start) [[likely]] return r;
  return (e.flags & kRecvHalf) ? Role::Irecv : Role::Isend;
}

// One-sided communication (MPI-3 RMA) and MPI-IO (ops.def codes 113-170): no model models them;
// every model keeps them at their recorded duration, and the M-steps count them as computation.
constexpr bool is_one_sided(Op op) { return op >= Op::Win_create && op <= Op::Win_test; }
constexpr bool is_file_io(Op op) { return op >= Op::File_open && op <= Op::File_iwrite_at_all; }
constexpr bool is_unmodelled(Op op) { return op >= Op::Win_create && op <= Op::File_iwrite_at_all; }

// A nonblocking collective's blocking version (Iallreduce -> Allreduce); any other op itself.
// The models charge a nonblocking collective as its blocking version at its start.
Op blocking_collective(Op op);
bool is_nonblocking_collective(Op op);

// One closed M-step of one rank (MODELS.md section 1). Times in ticks.
struct StepRecord {
  std::uint32_t index = 0;       // 1-based, local to the rank
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t compute = 0;     // w: time outside MPI within the step
  std::uint64_t mpi = 0;         // time inside MPI within the step
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  std::uint32_t msgs_in = 0;
  std::uint32_t msgs_out = 0;
  std::vector<std::int32_t> partners;  // Gamma(s,i): world ranks, sorted, including the rank itself
  // The local id of a communicator every member of which is in Gamma(s,i) too, or kNoWholeComm:
  // a collective in which the rank hears all of a communicator of kListedMembers or more closes
  // the step, and its members are named by the communicator, not listed (a collective of the whole
  // world would list every rank in every rank's step: ranks squared). step_partners() gives the
  // whole sorted set.
  std::int32_t whole_comm = -1;
  friend bool operator==(const StepRecord&, const StepRecord&) = default;
};
inline constexpr std::int32_t kNoWholeComm = -1;
// Communicators of fewer members are listed in a step's partners as before version 3.
inline constexpr std::size_t kListedMembers = 64;
// The last communicator id: a run that creates more communicators than ids shares it, so a step
// never names it as its whole_comm (its members are listed).
inline constexpr std::uint16_t kSharedCommId = 0xffff;

// A communicator the rank used: id and its members' world ranks in communicator rank order.
// For an intercommunicator the members are those of the remote group (the ranks peers refer to).
struct CommDef {
  std::uint16_t id = 0;
  bool inter = false;
  MemberList world_ranks;
  friend bool operator==(const CommDef&, const CommDef&) = default;
};

// The rank's definition of local communicator `id`: its last, as every reader takes it (RankComms);
// null when it has none.
const CommDef* find_comm(std::span<const CommDef> comms, std::int64_t id);

// Gamma(s,i) of a step as one sorted list of world ranks: its partners and, where it names one, the
// members of its whole communicator (the rank's last definition of that id; processes outside
// MPI_COMM_WORLD left out). O(members): for a table of steps, not for an analysis of every step.
std::vector<std::int32_t> step_partners(const StepRecord& s, std::span<const CommDef> comms);


// One call-site: the return addresses of up to MSTEP_STACK_DEPTH frames, innermost first, each
// as the shared object it lies in and its offset there, so mstep can resolve them offline.
struct CallsiteFrame {
  std::string module;
  std::uint64_t offset = 0;
  friend bool operator==(const CallsiteFrame&, const CallsiteFrame&) = default;
};
struct CallsiteDef {
  std::uint32_t id = 0;
  std::vector<CallsiteFrame> frames;
  friend bool operator==(const CallsiteDef&, const CallsiteDef&) = default;
};

// A clock sample: local ticks and CLOCK_MONOTONIC nanoseconds read together, and this rank's
// offset to rank 0's clock (rank0_ns = local_ns + offset_ns) measured by ping-pong at that moment.
struct ClockSync {
  enum When : std::uint8_t { AtInit = 0, AtFinalize = 1 };
  std::uint8_t when = AtInit;
  std::uint64_t ticks = 0;
  std::int64_t ns = 0;
  std::int64_t offset_ns = 0;
  std::int64_t rtt_ns = 0;  // round trip of the best sample: the offset's uncertainty
  friend bool operator==(const ClockSync&, const ClockSync&) = default;
};

// Fixed part at the start of every rank file (little endian, packed by the codec, not memcpy).
struct FileHeader {
  std::uint16_t version = kTraceVersion;
  std::int32_t rank = 0;
  std::int32_t world_size = 0;
  std::uint32_t pid = 0;
  std::uint8_t clock_kind = 0;     // 0: rdtsc, 1: clock_gettime(CLOCK_MONOTONIC) nanoseconds
  double ticks_per_second = 0;     // first estimate; ClockSync pairs refine it
  friend bool operator==(const FileHeader&, const FileHeader&) = default;
};

enum class FrameKind : std::uint8_t {
  Events = 1,     // Event records, column-encoded
  Steps = 2,      // StepRecord records
  Comms = 3,      // CommDef records
  Callsites = 4,  // CallsiteDef records
  Clock = 5,      // ClockSync records
  End = 6,        // written at Finalize: the trace is complete (no payload)
};

// Names inside a trace directory.
inline constexpr const char* kMetaFileName = "meta.json";
std::string rank_file_name(int rank);  // "rank-00003.mst"
// Whether a file name (no directory) is a rank file's: "rank-" at its start, ".mst" at its end.
bool is_rank_file_name(std::string_view name);

}  // namespace mstep
