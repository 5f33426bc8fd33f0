// Hands the memory a phase of an analysis freed back to the system before the next phase grows.
#pragma once

namespace mstep::model {

// mimalloc (the analysis binaries' allocator, tools/allocator) keeps the pages a phase freed for
// a while, and a later phase's blocks of other sizes do not reuse them: the replays of a 65 536-rank
// report free some 80 MB that stayed resident under the streaming pass (README, Figures, "Stop
// 44"). glibc's malloc is trimmed instead. Costs a walk of the allocator's free pages.
void return_free_memory();

}  // namespace mstep::model
