#include "ctrl/reconciler.h"

namespace ipu::ctrl {

Retry defaultRetry(const Error& error) {
  return error.retryClass() == RetryClass::kTerminal ? Retry::kAfterChange : Retry::kWithBackoff;
}

Retry Reconciler::onError(const kube::ObjectPtr&, const Error& error) {
  return defaultRetry(error);
}

}  // namespace ipu::ctrl
