#pragma once

namespace ipu::runtime::process {

// How a process ended, in shell terms: exited with `code`, or killed by `signal` (then code is 128 + signal).
struct ExitStatus {
  int code = 0;
  int signal = 0;

  bool succeeded() const { return code == 0 && signal == 0; }
  bool operator==(const ExitStatus&) const = default;
};

}  // namespace ipu::runtime::process
