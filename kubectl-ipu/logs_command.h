#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "kube/rest_client.h"

namespace ipu::kubectl_ipu {

struct LogsOptions {
  std::string ns;
  std::string job;
  bool follow = false;
  std::optional<int> instance;  // only this instance's workers
};

// `kubectl ipu logs JOB`: every worker's log, each line prefixed by attempt, instance and worker.
//   without -f  the latest attempt's workers, merged in time order;
//   with -f     every worker of every attempt from when it starts (a restart's new pods as they come), lines
//   as
//               they arrive, until the job has ended and every worker's log has been read to its end.
// Returns the exit code: 0, or 1 when the job cannot be read (a worker whose log cannot be read is reported
// on `err` and the others go on).
int showJobLogs(kube::RestClient& client, const LogsOptions& options, std::ostream& out, std::ostream& err);

}  // namespace ipu::kubectl_ipu
