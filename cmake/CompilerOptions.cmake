# Warnings are errors for the project's own code; dependencies' headers are included as system headers.
add_library(ipu_compile_options INTERFACE)
target_compile_options(ipu_compile_options INTERFACE -Wall -Wextra -Werror -Wpedantic -Wshadow
                                                     -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
                                                     -Woverloaded-virtual -Wformat=2
                                                     # g++ 12 flags designated initializers that leave members
                                                     # to their default member initializers, an idiom we use.
                                                     -Wno-missing-field-initializers)

if(IPU_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "IPU_FUZZ=ON needs clang (libFuzzer is part of clang), not ${CMAKE_CXX_COMPILER_ID}: "
                        "configure a fresh build directory with -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  if(NOT IPU_SANITIZE)
    message(FATAL_ERROR "IPU_FUZZ=ON needs IPU_SANITIZE=ON: the fuzzers run under ASan+UBSan")
  endif()
endif()

if(IPU_SANITIZE)
  # One configuration for both: ASan finds memory errors, UBSan undefined behaviour; any report fails the test.
  set(sanitize_flags -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  if(IPU_FUZZ)
    # libFuzzer's coverage instrumentation for all of the project's code, without libFuzzer's main(): the unit
    # tests of this build link as usual (the sanitizer runtime has the hooks), the fuzzers add -fsanitize=fuzzer.
    list(APPEND sanitize_flags -fsanitize=fuzzer-no-link)
    # -O1, as libFuzzer's documentation advises with sanitizers: at -O0 (Debug) nlohmann::json's templates made
    # the JSON fuzzers several times slower. Assertions stay (no NDEBUG).
    list(APPEND sanitize_flags -O1)
  endif()
  target_compile_options(ipu_compile_options INTERFACE ${sanitize_flags})
  target_link_options(ipu_compile_options INTERFACE ${sanitize_flags})
endif()
