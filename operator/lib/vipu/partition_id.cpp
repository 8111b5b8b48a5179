#include "vipu/partition_id.h"

#include "common/digest.h"
#include "common/stable_hash.h"

namespace ipu::vipu {
namespace {

bool isIdStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool isIdChar(char c) {
  return isIdStart(c) || c == '.' || c == '_' || c == '-';
}

std::string fullId(std::string_view nameSpace, std::string_view job, std::uint32_t instance) {
  return std::string(nameSpace) + "_" + std::string(job) + "_" + std::to_string(instance);
}

// The readable start of `id` and '_' + the hash, maxLength in all.
std::string shortened(const std::string& id, const std::string& hash, std::size_t maxLength) {
  const std::string tail = "_" + hash;
  const std::size_t keep = maxLength > tail.size() ? maxLength - tail.size() : 0;
  return id.substr(0, keep) + tail;
}

}  // namespace

Status validatePartitionId(std::string_view id) {
  if (id.empty()) return makeError(ErrorCode::kInvalidArgument, "partition id is empty");
  if (id.size() > kMaxPartitionIdLength) {
    return makeError(ErrorCode::kInvalidArgument, "partition id is " + std::to_string(id.size()) +
                                                      " characters long; the limit is " +
                                                      std::to_string(kMaxPartitionIdLength));
  }
  if (!isIdStart(id.front())) {
    return makeError(ErrorCode::kInvalidArgument,
                     "partition id '" + std::string(id) + "' must start with a letter or a digit");
  }
  for (char c : id) {
    if (!isIdChar(c)) {
      return makeError(ErrorCode::kInvalidArgument,
                       "partition id '" + std::string(id) + "' contains a character outside [A-Za-z0-9._-]");
    }
  }
  return {};
}

std::string derivePartitionId(std::string_view nameSpace, std::string_view job, std::uint32_t instance,
                              std::size_t maxLength) {
  std::string id = fullId(nameSpace, job, instance);
  return id.size() <= maxLength ? id : shortened(id, sha256Hex(id, 24), maxLength);
}

std::string derivePartitionIdFnv48(std::string_view nameSpace, std::string_view job, std::uint32_t instance,
                                   std::size_t maxLength) {
  std::string id = fullId(nameSpace, job, instance);
  return id.size() <= maxLength ? id : shortened(id, stableHashHex(id, 12), maxLength);
}

}  // namespace ipu::vipu
