#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

// The other end of `ipu-runtime files`: a ustar stream, as it arrives, written under a destination the user
// chose (`kubectl ipu cp`). The stream comes from a pod, which anyone who may edit the namespace could have
// changed, so it is read as hostile: nothing is written outside the destination (no absolute path, no "..",
// no existing symbolic link followed on the way), no link is created, no set-user-ID bit kept.
namespace ipu::runtime::files {

struct ExtractSummary {
  std::uint64_t files = 0;
  std::uint64_t directories = 0;
  std::uint64_t bytes = 0;
  std::uint64_t skipped = 0;  // links and special files, reported through `warn`
};

class ArchiveExtractor {
 public:
  // `destination`: where the archived path goes. For an archived directory, the directory that receives its
  // contents (made when missing; its parent must exist). For an archived file, the file's new path, or an
  // existing directory to put it in under its own name.
  ArchiveExtractor(std::string destination, std::function<void(const std::string&)> warn);
  ~ArchiveExtractor();
  ArchiveExtractor(const ArchiveExtractor&) = delete;
  ArchiveExtractor& operator=(const ArchiveExtractor&) = delete;

  // The next bytes of the stream, in any sizes. std::runtime_error for a stream that is not a ustar archive,
  // a path that would leave the destination, or a file that cannot be written.
  void feed(std::string_view bytes);
  // The stream has ended: std::runtime_error when it ended before the archive's end.
  ExtractSummary finish();

 private:
  class State;
  std::unique_ptr<State> state_;
};

// A relative archive path as its components, "." and empty ones dropped; std::runtime_error for an absolute
// path or one with "..". Empty for the archive's top directory.
std::vector<std::string> safeComponents(const std::string& path);

}  // namespace ipu::runtime::files
