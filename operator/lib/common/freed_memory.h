#pragma once

#include <chrono>
#include <stop_token>
#include <thread>

namespace ipu {

// Gives the pages of memory the process has freed back to the system (glibc's malloc_trim). glibc returns
// freed memory by itself only from the top of its heap; the operator's heap swings (a page of 500 listed
// pods parsed and dropped, a V-IPU topology of thousands of IPUs read and dropped, a burst of reconciles),
// and without this the resident size stays at the highest swing for the life of the process.
void releaseFreedMemory();

// Calls releaseFreedMemory() every `period` until `stop` is requested. A walk of the free lists and an
// madvise per free run of pages: well under a millisecond for the heaps the operator has.
void releaseFreedMemoryEvery(std::chrono::milliseconds period, std::stop_token stop);

// A thread doing that until it is destroyed (which stops and joins it).
std::jthread releaseFreedMemoryInBackground(std::chrono::milliseconds period);

}  // namespace ipu
