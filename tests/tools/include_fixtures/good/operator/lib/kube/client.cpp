#include "kube/client.h"

#include <string>

#include "kube/proto/generated.pb.h"  // exists only in a build tree: not part of the graph

Result get(const char* path) { return Result{path}; }
