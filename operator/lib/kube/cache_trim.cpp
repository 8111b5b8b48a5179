#include "kube/cache_trim.h"

namespace ipu::kube {

void stripBookkeeping(Json& object) {
  if (!object.is_object()) return;
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return;
  metadata->erase("managedFields");
  auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return;
  annotations->erase("kubectl.kubernetes.io/last-applied-configuration");
  if (annotations->empty()) metadata->erase(annotations);
}

}  // namespace ipu::kube
