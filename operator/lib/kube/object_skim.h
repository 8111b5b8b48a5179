#pragma once

#include <cstddef>
#include <string_view>

#include "kube/rest_client.h"

namespace ipu::kube {

// What a watch event line cut at the transport's cap (StreamLine::cut) still tells, read from its first
// bytes: the event's type and the object's apiVersion, kind, metadata.name, .namespace, .uid,
// .resourceVersion and ownerReferences (apiVersion, kind, name, uid, controller), as far as the prefix
// reaches. The API server writes metadata first, so name, namespace and uid are always there; owner
// references come after labels and annotations and may not be. A SAX pass keeps nothing else: what this
// costs is bounded by the prefix, whatever the line held. The result's oversizedBytes is `bytes`.
WatchEvent skimOversizedEvent(std::string_view prefix, std::size_t bytes);

}  // namespace ipu::kube
