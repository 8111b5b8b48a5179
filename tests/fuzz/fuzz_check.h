#pragma once

#include <cstdio>
#include <cstdlib>

// A property a fuzz target asserts: when it does not hold, the input is a finding. abort() makes libFuzzer
// keep the input as a crash artifact, like a sanitizer report or an uncaught exception would.
#define FUZZ_CHECK(condition)                                                                  \
  do {                                                                                         \
    if (!(condition)) {                                                                        \
      std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #condition, __FILE__, __LINE__); \
      std::abort();                                                                            \
    }                                                                                          \
  } while (false)
