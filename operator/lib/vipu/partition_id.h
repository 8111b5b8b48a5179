#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace ipu::vipu {

// Partition ids, as vipu-sim enforces them and the operator derives them: 1 to kMaxPartitionIdLength
// characters from [A-Za-z0-9._-], starting with a letter or digit. The set keeps ids safe in file names,
// environment variables and Kubernetes label values; the length fits the label-value limit (63) too.
inline constexpr std::size_t kMaxPartitionIdLength = 63;

Status validatePartitionId(std::string_view id);

// "<namespace>_<job>_<instance>": '_' cannot occur in Kubernetes names, so different jobs never share an id.
// Ids over maxLength keep a readable prefix and end in '_' + 12 hex digits of a hash of the full id.
std::string derivePartitionId(std::string_view nameSpace, std::string_view job, std::uint32_t instance,
                              std::size_t maxLength = kMaxPartitionIdLength);

}  // namespace ipu::vipu
