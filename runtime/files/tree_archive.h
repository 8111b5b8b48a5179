#pragma once

#include <cstdint>
#include <functional>
#include <string>

// `ipu-runtime files PATH`: a file or a directory tree written as a ustar stream, for `kubectl ipu cp` (or
// any tar) to read on the other end of `kubectl exec`, so that getting files out of a worker needs no tar in
// its image.
namespace ipu::runtime::files {

struct ArchiveSummary {
  std::uint64_t files = 0;
  std::uint64_t directories = 0;
  std::uint64_t bytes = 0;  // of file content
};

// Writes `path` to `fd` as a ustar archive and ends it. A regular file is one entry named by its last
// component; a directory is "." and everything under it, relative to it, in sorted order, symbolic links as
// links (never followed). What cannot be archived (a socket, a file that cannot be opened) is left out and
// reported through `warn`; a file that shrinks while it is read is padded with zeros, one that grows is cut
// at the size it had, both reported. std::runtime_error when `path` itself cannot be read or `fd` cannot be
// written (the reader went away).
ArchiveSummary writeTreeArchive(const std::string& path, int fd,
                                const std::function<void(const std::string&)>& warn);

}  // namespace ipu::runtime::files
