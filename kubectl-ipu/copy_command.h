#pragma once

#include <iosfwd>
#include <string>

#include "kube/rest_client.h"

namespace ipu::kubectl_ipu {

struct CopyOptions {
  std::string ns;
  std::string job;
  std::string path;         // in the worker's container; relative to its working directory
  std::string destination;  // here
  int worker = 0;           // <job>-worker-<worker>
  // Passed on to `kubectl exec`, so that it reaches the cluster the plugin reads.
  std::string kubeconfig;
  std::string context;
};

// `kubectl ipu cp JOB:PATH DEST`: PATH (a file, or a directory and everything under it) out of a running
// worker of the job, through `kubectl exec` of `ipu-runtime files` in the worker's container: no tar in the
// image, no listener, no rights beyond `pods/exec` (which the `edit` role has). The stream is read as hostile
// (runtime/files/archive_extractor.h). kubectl is $KUBECTL, else `kubectl` on PATH. Returns the exit code:
// 0, 1 when the worker cannot be found or read, or the copy fails.
int copyFromJob(kube::RestClient& client, const CopyOptions& options, std::ostream& out, std::ostream& err);

}  // namespace ipu::kubectl_ipu
