#include "vipu-sim/call_log.h"

#include <cstdio>
#include <ctime>
#include <string>

namespace ipu::vipu::sim {
namespace {

std::string timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(millis));
  return text;
}

}  // namespace

std::string_view grpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

void CallLog::record(std::string_view method, std::string_view arguments, const grpc::Status& status,
                     std::chrono::steady_clock::duration duration) {
  if (!enabled_) return;
  const double millis = std::chrono::duration<double, std::milli>(duration).count();
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, "%.1f ms", millis);
  std::string line = timestamp() + " " + std::string(method);
  if (!arguments.empty()) line += " " + std::string(arguments);
  line += " -> " + std::string(grpcCodeName(status.error_code()));
  if (!status.ok()) line += ": " + status.error_message();
  line += " (" + std::string(elapsed) + ")\n";
  std::lock_guard lock(mutex_);
  out_ << line << std::flush;
}

void CallLog::note(std::string_view message) {
  std::string line = timestamp() + " " + std::string(message) + "\n";
  std::lock_guard lock(mutex_);
  out_ << line << std::flush;
}

}  // namespace ipu::vipu::sim
