#pragma once

#include "common/result.h"
#include "ctrl/action.h"
#include "kube/store.h"

namespace ipu::ctrl {

// One kind of object driven towards its spec. The controller calls reconcile with the object as the cache has
// it (never null: a key whose object is gone from the cache is not reconciled), at most once at a time per
// object, and onError when it fails.
class Reconciler {
 public:
  virtual ~Reconciler() = default;

  virtual Result<Action> reconcile(const kube::ObjectPtr& object) = 0;

  // The error policy: may tell the user about the error (status, an Event) before deciding how to retry.
  // The default is defaultRetry().
  virtual Retry onError(const kube::ObjectPtr& object, const Error& error);
};

}  // namespace ipu::ctrl
