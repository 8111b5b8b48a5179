#include "metrics/health_checks.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <stdexcept>

namespace ipu::metrics {
namespace {

bool isValidCheckName(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

// A report has one line per check, whatever the message holds.
std::string oneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

// Empty when the check passed, else why it failed.
std::optional<std::string> failureOf(const HealthCheck& check) {
  try {
    const Status status = check();
    if (status.ok()) return std::nullopt;
    return status.error().message.empty() ? std::string(toString(status.error().code))
                                          : status.error().message;
  } catch (const std::exception& e) {
    return std::string("threw: ") + e.what();
  } catch (...) {
    return std::string("threw a non-standard exception");
  }
}

}  // namespace

HealthChecks::HealthChecks(std::string endpoint) : endpoint_(std::move(endpoint)) {}

void HealthChecks::add(std::string name, HealthCheck check) {
  if (!isValidCheckName(name)) {
    throw std::invalid_argument("invalid " + endpoint_ + " check name \"" + name +
                                "\": use letters, digits, '-', '_' and '.'");
  }
  if (!check) throw std::invalid_argument(endpoint_ + " check \"" + name + "\" is empty");
  std::lock_guard lock(mutex_);
  const bool taken =
      std::any_of(checks_.begin(), checks_.end(), [&](const auto& c) { return c.first == name; });
  if (taken) throw std::invalid_argument(endpoint_ + " check \"" + name + "\" is already registered");
  checks_.emplace_back(std::move(name), std::move(check));
}

HealthChecks::Report HealthChecks::run(bool verbose) const {
  // Checks run without the lock: they may be slow, and one may even add another.
  std::vector<std::pair<std::string, HealthCheck>> checks;
  {
    std::lock_guard lock(mutex_);
    checks = checks_;
  }
  Report report;
  std::string lines;
  for (const auto& [name, check] : checks) {
    if (const auto failure = failureOf(check)) {
      report.passed = false;
      lines += "[-]" + name + " failed: " + oneLine(*failure) + "\n";
    } else if (verbose) {
      lines += "[+]" + name + " ok\n";
    }
  }
  if (report.passed) {
    report.text = verbose ? lines + endpoint_ + " check passed\n" : "ok";
  } else {
    report.text = lines + endpoint_ + " check failed\n";
  }
  return report;
}

}  // namespace ipu::metrics
