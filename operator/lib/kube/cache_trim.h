#pragma once

#include <functional>

#include "kube/rest_client.h"

namespace ipu::kube {

// What an informer keeps of each object it caches (client-go's TransformFunc). A field nobody reads costs
// memory in every cached object for as long as the object lives, and the cache holds them all.
using CacheTransform = std::function<void(Json& object)>;
// Whether the cache keeps an object (Informer::setFilter).
using CacheFilter = std::function<bool(const Json& object)>;

// Removes what no controller reads from any object: metadata.managedFields (server-side apply's
// bookkeeping, often the larger part of a small object) and kubectl's last-applied-configuration annotation
// (a second copy of the object as applied). Every informer applies it before its own transform.
void stripBookkeeping(Json& object);

}  // namespace ipu::kube
