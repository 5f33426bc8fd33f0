// Huge pages for the analysis binaries' allocator (tools/allocator/large_pages.cpp).
#pragma once

namespace mstep {

// Built with mimalloc (MSTEP_MIMALLOC): runs this program again, once, with mimalloc's large OS
// pages on (MIMALLOC_LARGE_OS_PAGES=1), unless the environment already says, or valgrind runs it;
// in the run again, takes the setting out of the environment so that nothing it starts inherits
// it. Returns when nothing was to be done or the exec failed. Without mimalloc: nothing.
void use_large_pages(char** argv);

}  // namespace mstep
