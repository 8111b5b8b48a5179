#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace ipu::vipu::sim {

// Replaces `path` with `content` so that a crash at any instant leaves either the old file or the new one,
// never a mix: write a temporary file beside it, fsync it, rename it over the old one, fsync the directory.
Status writeFileAtomically(const std::string& path, std::string_view content);

// The whole file; kNotFound when it does not exist, kInternal for other read failures (message names the
// file).
Result<std::string> readWholeFile(const std::string& path);

}  // namespace ipu::vipu::sim
