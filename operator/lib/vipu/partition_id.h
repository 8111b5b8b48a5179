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
// Ids over maxLength keep a readable prefix and end in '_' + 24 hex digits (96 bits) of SHA-256 of the full
// id: finding two names with one id costs about 2^48 hashes, out of reach of a tenant choosing job names.
std::string derivePartitionId(std::string_view nameSpace, std::string_view job, std::uint32_t instance,
                              std::size_t maxLength = kMaxPartitionIdLength);

// The id earlier builds derived, whose shortened form ended in 12 hex digits (48 bits) of FNV-1a (a
// collision in about 2^24 tries): still recognised, so the jobs they admitted keep their partitions across an
// upgrade; never given to a new job. Equal to derivePartitionId for ids that were not shortened.
std::string derivePartitionIdFnv48(std::string_view nameSpace, std::string_view job, std::uint32_t instance,
                                   std::size_t maxLength = kMaxPartitionIdLength);

}  // namespace ipu::vipu
