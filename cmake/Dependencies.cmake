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
