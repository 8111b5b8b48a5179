#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

// The POSIX ustar archive format (pax interchange format for what ustar cannot hold), as much of it as a
// job's files need: regular files, directories and symbolic links. Any tar reads what the writer writes; the
// reader reads what the writer writes and GNU tar's base-256 sizes.
namespace ipu::runtime::files {

inline constexpr std::size_t kBlock = 512;

enum class EntryType { kFile, kDirectory, kSymlink, kOther };

struct Entry {
  std::string path;  // relative, '/'-separated; "." for the archived directory itself
  EntryType type = EntryType::kFile;
  std::uint64_t size = 0;  // files only
  std::uint32_t mode = 0644;
  std::int64_t mtime = 0;  // seconds since the epoch
  std::string linkTarget;  // symlinks only
};

// The header of `entry`: one 512-byte block, preceded by a pax extended header (and its records) when the
// path or the link target does not fit ustar's fields. Sizes of 8 GiB and more are written in base 256.
std::string headerBlocks(const Entry& entry);

// Two zero blocks: the end of the archive.
std::string endOfArchive();

// Bytes of padding after `size` bytes of content, up to the next block.
inline std::size_t paddingAfter(std::uint64_t size) {
  return static_cast<std::size_t>((kBlock - size % kBlock) % kBlock);
}

// One header block read: the entry it describes (its path as the block has it, before a pax record
// overrides it), or a pax extended header ('x', whose records follow as content of `size` bytes), or the
// zero block that ends an archive. std::runtime_error for a block that is not a ustar header (bad checksum).
struct Header {
  // kGnuLongName/kGnuLongLink: GNU tar's 'L'/'K' blocks, whose content is the next entry's path or link.
  enum class Kind { kEntry, kPaxRecords, kGlobalPax, kGnuLongName, kGnuLongLink, kEnd } kind = Kind::kEntry;
  Entry entry;
};
Header parseHeader(std::string_view block);

// The records of a pax extended header that matter here: "path" and "linkpath" (UTF-8, any length).
struct PaxRecords {
  std::optional<std::string> path;
  std::optional<std::string> linkPath;
  std::optional<std::uint64_t> size;
};
PaxRecords parsePaxRecords(std::string_view records);

}  // namespace ipu::runtime::files
