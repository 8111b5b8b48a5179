#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "vipu/client_options.h"
#include "vipu/vipu_api.h"

namespace ipu::vipu {

// The V-IPU controllers the operator uses, one per IPU-POD, by name. Thread-safe.
class VipuControllers {
 public:
  // Registers an API under a name (any VipuApi: a VipuClient, or an in-memory SimulatedPod in tests).
  Status add(const std::string& name, std::shared_ptr<VipuApi> api);
  // Creates a VipuClient from options and registers it under options.name.
  Status connect(const ClientOptions& options);

  // NotFound names the controllers that do exist.
  Result<std::shared_ptr<VipuApi>> get(std::string_view name) const;
  std::vector<std::string> names() const;

  // "pod-a=10.0.0.1:8090,pod-b=10.0.0.2:8090" (or one bare "host:port", named "default") -> one ClientOptions
  // per controller, the rest copied from `defaults`. For operator flags and Helm values.
  static Result<std::vector<ClientOptions>> parseEndpoints(std::string_view spec,
                                                           const ClientOptions& defaults);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<VipuApi>, std::less<>> controllers_;
};

}  // namespace ipu::vipu
