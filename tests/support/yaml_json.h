#pragma once

// The tests read manifests with the same YAML reader kubectl-ipu uses.
#include "cli/yaml_json.h"

namespace ipu::testing {

using cli::yamlDocumentsToJson;
using cli::yamlFileToJson;
using cli::yamlToJson;

}  // namespace ipu::testing
