#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/result.h"
#include "ctrl/action.h"
#include "ctrl/own_writes.h"
#include "kube/resource.h"
#include "kube/rest_client.h"

namespace ipu::ctrl {

using Json = nlohmann::json;

// kube-rs's finalizer() flow for one finalizer name, with JSON-patch `test` guards so that a concurrent edit
// of the finalizers (another controller's) is never overwritten:
//  - alive, finalizer missing: adds it and ends the pass (awaitChange). There is no point applying with
//    the object as read: the patch changes it, and its watch event starts the next pass with the new version
//    (going on would make the pass's first conditional write fail with 409 Conflict).
//  - alive, finalizer present: apply(object).
//  - being deleted, finalizer present: cleanup(object); only when it says it is done (nullopt) is the
//    finalizer removed. A cleanup that waits for something (a job's pods to stop) answers how the pass ends
//    meanwhile, and a failed one its error (to the controller's error policy); both keep the finalizer.
//  - being deleted, finalizer absent: nothing to do (someone else's finalizer holds the object).
// Both apply and cleanup must be idempotent: either may run again after a crash.
class Finalizer {
 public:
  using Step = std::function<Result<Action>(const Json& object)>;
  // nullopt: done, the finalizer goes; an Action: not done yet, the pass ends with it.
  using Cleanup = std::function<Result<std::optional<Action>>(const Json& object)>;

  // `ownWrites` (optional): where each finalizer patch records the version it replaced (read-your-writes).
  Finalizer(kube::RestClient& client, kube::ResourceRef resource, std::string name,
            OwnWrites* ownWrites = nullptr);

  Result<Action> run(const Json& object, const Step& apply, const Cleanup& cleanup) const;

  const std::string& name() const { return name_; }
  bool isSetOn(const Json& object) const;

 private:
  Status add(const Json& object) const;
  Status remove(const Json& object) const;
  void recordWrite(const Json& object, const Json& written) const;

  kube::RestClient& client_;
  kube::ResourceRef resource_;
  std::string name_;
  OwnWrites* ownWrites_;
};

}  // namespace ipu::ctrl
