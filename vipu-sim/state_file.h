#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "vipu-sim/sim_state.h"

namespace ipu::vipu::sim {

// vipu-sim's state on disk: one JSON document, replaced atomically after every change.
// Loading validates everything (format, version, topology, ids, IPU blocks, overlaps) and refuses a damaged
// file with a message naming it and the problem: starting empty over real state would orphan every partition.
class StateFile {
 public:
  static constexpr int kFormatVersion = 1;

  explicit StateFile(std::string path) : path_(std::move(path)) {}

  // nullopt when the file does not exist yet (first start).
  Result<std::optional<SimState>> load() const;
  Status save(const SimState& state) const;
  const std::string& path() const { return path_; }

  static std::string serialize(const SimState& state);
  // `origin` names the source in messages (the file's path).
  static Result<SimState> parse(std::string_view text, std::string_view origin);

 private:
  std::string path_;
};

}  // namespace ipu::vipu::sim
