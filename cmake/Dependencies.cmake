# Every dependency comes from Debian packages (tools/install-deps.sh installs them).
find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(cpprestsdk REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
# Metrics: prometheus-cpp's core library only (prometheus-cpp::core); /metrics is served by our own endpoint.
find_package(prometheus-cpp CONFIG REQUIRED)
# Flags of ipu-operator, vipu-sim and vipu-ctl (header-only).
find_package(CLI11 CONFIG REQUIRED)
if(IPU_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()

# ipu-operator links gRPC, protobuf, abseil (and what they use: upb, re2, c-ares, zlib) and yaml-cpp from
# Debian's static archives, with --gc-sections: its resident memory is a third shared-library pages, and the
# pages of a static link's used code are fewer (docs/benchmarks.md, "What static linking saves in memory").
# cpprestsdk and prometheus-cpp come as shared objects only, so OpenSSL, Boost and libstdc++, which they
# load, stay shared (two copies of OpenSSL in one process would each keep state the other never sees).
# Only the ipu-operator target links so (its IPU_STATIC_DEPS property); tests and tools link shared objects.
option(IPU_OPERATOR_STATIC_DEPS "Link ipu-operator with the static archives of gRPC, protobuf, abseil, yaml-cpp" ON)
add_library(ipu_static_deps INTERFACE)
if(IPU_OPERATOR_STATIC_DEPS)
  find_program(IPU_PKG_CONFIG pkg-config REQUIRED)
  execute_process(COMMAND ${IPU_PKG_CONFIG} --static --libs-only-l grpc++ protobuf yaml-cpp
                  OUTPUT_VARIABLE ipu_static_libs OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  separate_arguments(ipu_static_libs UNIX_COMMAND "${ipu_static_libs}")
  list(REMOVE_DUPLICATES ipu_static_libs)
  list(REMOVE_ITEM ipu_static_libs -lssl -lcrypto -ldl -lm -lrt -latomic -lpthread)
  foreach(lib IN LISTS ipu_static_libs)
    string(REGEX REPLACE "^-l" "" name "${lib}")
    find_library(ipu_static_archive_${name} NAMES lib${name}.a NO_CACHE)
    if(NOT ipu_static_archive_${name})
      message(FATAL_ERROR "IPU_OPERATOR_STATIC_DEPS: no static archive lib${name}.a (install the -dev package, "
                          "or configure with -DIPU_OPERATOR_STATIC_DEPS=OFF)")
    endif()
  endforeach()
  # One group, so their order among themselves does not matter; the rest of the link stays dynamic.
  target_link_libraries(ipu_static_deps INTERFACE "-Wl,--push-state,-Bstatic,--start-group" ${ipu_static_libs}
                                                  "-Wl,--end-group,--pop-state" OpenSSL::SSL OpenSSL::Crypto
                                                  atomic ${CMAKE_DL_LIBS} rt Threads::Threads)
endif()
# What a library that uses gRPC and protobuf, or yaml-cpp, links: the shared objects, or for a target whose
# IPU_STATIC_DEPS property is true (ipu-operator) the static group above.
set(ipu_static_head "$<BOOL:$<TARGET_PROPERTY:IPU_STATIC_DEPS>>")
add_library(ipu_grpc INTERFACE)
target_link_libraries(ipu_grpc INTERFACE "$<${ipu_static_head}:ipu_static_deps>"
                                         "$<$<NOT:${ipu_static_head}>:gRPC::grpc++;protobuf::libprotobuf>")
add_library(ipu_yaml INTERFACE)
target_link_libraries(ipu_yaml INTERFACE "$<${ipu_static_head}:ipu_static_deps>"
                                         "$<$<NOT:${ipu_static_head}>:yaml-cpp>")
