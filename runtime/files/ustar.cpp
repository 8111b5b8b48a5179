#include "files/ustar.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace ipu::runtime::files {
namespace {

// Field offsets and widths of a ustar header.
constexpr std::size_t kName = 0, kNameLen = 100;
constexpr std::size_t kMode = 100, kModeLen = 8;
constexpr std::size_t kUid = 108, kGid = 116, kIdLen = 8;
constexpr std::size_t kSize = 124, kSizeLen = 12;
constexpr std::size_t kMtime = 136, kMtimeLen = 12;
constexpr std::size_t kChecksum = 148, kChecksumLen = 8;
constexpr std::size_t kTypeflag = 156;
constexpr std::size_t kLinkname = 157, kLinknameLen = 100;
constexpr std::size_t kMagic = 257;
constexpr std::size_t kPrefix = 345, kPrefixLen = 155;
constexpr std::uint64_t kLargestOctalSize = 077777777777ULL;  // 11 octal digits

void putOctal(std::string& block, std::size_t offset, std::size_t width, std::uint64_t value) {
  // width - 1 digits and a NUL, as tar writes them.
  char text[32];
  std::snprintf(text, sizeof text, "%0*llo", static_cast<int>(width - 1),
                static_cast<unsigned long long>(value));
  block.replace(offset, width - 1, text, width - 1);
  block[offset + width - 1] = '\0';
}

void putBase256(std::string& block, std::size_t offset, std::size_t width, std::uint64_t value) {
  block[offset] = static_cast<char>(0x80);
  for (std::size_t i = width - 1; i > 0; --i) {
    block[offset + i] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
}

void putString(std::string& block, std::size_t offset, std::size_t width, std::string_view value) {
  block.replace(offset, std::min(width, value.size()), value.substr(0, width));
}

unsigned checksumOf(std::string_view block) {
  unsigned sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) {
    const bool inChecksum = i >= kChecksum && i < kChecksum + kChecksumLen;
    sum += inChecksum ? ' ' : static_cast<unsigned char>(block[i]);
  }
  return sum;
}

std::uint64_t readNumber(std::string_view field) {
  if (!field.empty() && (static_cast<unsigned char>(field[0]) & 0x80) != 0) {  // base 256
    std::uint64_t value = static_cast<unsigned char>(field[0]) & 0x7f;
    for (std::size_t i = 1; i < field.size(); ++i)
      value = (value << 8) | static_cast<unsigned char>(field[i]);
    return value;
  }
  std::uint64_t value = 0;
  for (const char c : field) {
    if (c == '\0' || c == ' ') {
      if (value != 0) break;
      continue;
    }
    if (c < '0' || c > '7') throw std::runtime_error("a tar header field is not an octal number");
    value = value * 8 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

std::string readString(std::string_view block, std::size_t offset, std::size_t width) {
  const std::string_view field = block.substr(offset, width);
  return std::string(field.substr(0, field.find('\0')));
}

// "<length> <key>=<value>\n", where length counts the whole record, its own digits included.
std::string paxRecord(const std::string& key, const std::string& value) {
  const std::size_t body = 1 + key.size() + 1 + value.size() + 1;
  std::size_t length = body + 1;
  while (std::to_string(length).size() + body != length) ++length;
  return std::to_string(length) + " " + key + "=" + value + "\n";
}

// Splits `path` into ustar's prefix and name, at a '/', when it fits them; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> splitForUstar(const std::string& path) {
  if (path.size() <= kNameLen) return std::pair{std::string(), path};
  for (std::size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    if (slash <= kPrefixLen && path.size() - slash - 1 <= kNameLen && slash + 1 < path.size())
      return std::pair{path.substr(0, slash), path.substr(slash + 1)};
  }
  return std::nullopt;
}

char typeflagOf(EntryType type) {
  switch (type) {
    case EntryType::kDirectory:
      return '5';
    case EntryType::kSymlink:
      return '2';
    default:
      return '0';
  }
}

std::string headerBlock(const Entry& entry, const std::string& prefix, const std::string& name,
                        const std::string& link, char typeflag, std::uint64_t size) {
  std::string block(kBlock, '\0');
  putString(block, kName, kNameLen, name);
  putOctal(block, kMode, kModeLen, entry.mode & 07777);
  putOctal(block, kUid, kIdLen, 0);
  putOctal(block, kGid, kIdLen, 0);
  if (size > kLargestOctalSize) {
    putBase256(block, kSize, kSizeLen, size);
  } else {
    putOctal(block, kSize, kSizeLen, size);
  }
  putOctal(block, kMtime, kMtimeLen, static_cast<std::uint64_t>(std::max<std::int64_t>(0, entry.mtime)));
  block[kTypeflag] = typeflag;
  putString(block, kLinkname, kLinknameLen, link);
  putString(block, kMagic, 8,
            std::string_view("ustar\0"
                             "00",
                             8));
  putString(block, kPrefix, kPrefixLen, prefix);
  char checksum[8];
  std::snprintf(checksum, sizeof checksum, "%06o", checksumOf(block));
  block.replace(kChecksum, 6, checksum, 6);
  block[kChecksum + 6] = '\0';
  block[kChecksum + 7] = ' ';
  return block;
}

}  // namespace

std::string headerBlocks(const Entry& entry) {
  std::string path = entry.path;
  if (entry.type == EntryType::kDirectory && !path.ends_with('/')) path += '/';
  const auto split = splitForUstar(path);
  const bool longLink = entry.linkTarget.size() > kLinknameLen;
  std::string out;
  if (!split || longLink) {
    std::string records;
    if (!split) records += paxRecord("path", path);
    if (longLink) records += paxRecord("linkpath", entry.linkTarget);
    Entry pax{.path = "PaxHeaders/" + path.substr(0, 80), .mode = 0644, .mtime = entry.mtime};
    out += headerBlock(pax, "", pax.path.substr(0, kNameLen), "", 'x', records.size());
    out += records + std::string(paddingAfter(records.size()), '\0');
  }
  const std::string prefix = split ? split->first : "";
  const std::string name =
      split ? split->second : path.substr(path.size() > kNameLen ? path.size() - kNameLen : 0);
  const std::uint64_t size = entry.type == EntryType::kFile ? entry.size : 0;
  out += headerBlock(entry, prefix, name, entry.linkTarget.substr(0, kLinknameLen), typeflagOf(entry.type),
                     size);
  return out;
}

std::string endOfArchive() {
  return std::string(2 * kBlock, '\0');
}

Header parseHeader(std::string_view block) {
  if (block.size() != kBlock) throw std::runtime_error("a tar header is cut short");
  if (std::all_of(block.begin(), block.end(), [](char c) { return c == '\0'; }))
    return {Header::Kind::kEnd, {}};
  if (readNumber(block.substr(kChecksum, kChecksumLen)) != checksumOf(block))
    throw std::runtime_error("a tar header's checksum does not match: not a tar stream, or a damaged one");
  Header header;
  Entry& entry = header.entry;
  const std::string name = readString(block, kName, kNameLen);
  const bool ustar = block.substr(kMagic, 5) == "ustar";
  const std::string prefix = ustar ? readString(block, kPrefix, kPrefixLen) : "";
  entry.path = prefix.empty() ? name : prefix + "/" + name;
  entry.mode = static_cast<std::uint32_t>(readNumber(block.substr(kMode, kModeLen)));
  entry.size = readNumber(block.substr(kSize, kSizeLen));
  entry.mtime = static_cast<std::int64_t>(readNumber(block.substr(kMtime, kMtimeLen)));
  entry.linkTarget = readString(block, kLinkname, kLinknameLen);
  switch (block[kTypeflag]) {
    case '0':
    case '\0':
    case '7':
      entry.type = EntryType::kFile;
      break;
    case '5':
      entry.type = EntryType::kDirectory;
      break;
    case '2':
      entry.type = EntryType::kSymlink;
      break;
    case 'x':
      header.kind = Header::Kind::kPaxRecords;
      break;
    case 'g':
      header.kind = Header::Kind::kGlobalPax;
      break;
    case 'L':
      header.kind = Header::Kind::kGnuLongName;
      break;
    case 'K':
      header.kind = Header::Kind::kGnuLongLink;
      break;
    default:
      entry.type = EntryType::kOther;
  }
  if (entry.type == EntryType::kDirectory && entry.path.size() > 1 && entry.path.ends_with('/'))
    entry.path.pop_back();
  return header;
}

PaxRecords parsePaxRecords(std::string_view records) {
  PaxRecords parsed;
  while (!records.empty()) {
    const std::size_t space = records.find(' ');
    if (space == std::string_view::npos) throw std::runtime_error("a pax record has no length");
    std::size_t length = 0;
    for (const char c : records.substr(0, space)) {
      if (c < '0' || c > '9') throw std::runtime_error("a pax record's length is not a number");
      length = length * 10 + static_cast<std::size_t>(c - '0');
    }
    if (length <= space + 1 || length > records.size() || records[length - 1] != '\n')
      throw std::runtime_error("a pax record's length does not match it");
    const std::string_view record = records.substr(space + 1, length - space - 2);
    const std::size_t equals = record.find('=');
    if (equals != std::string_view::npos) {
      const std::string_view key = record.substr(0, equals);
      const std::string value(record.substr(equals + 1));
      if (key == "path") parsed.path = value;
      if (key == "linkpath") parsed.linkPath = value;
      if (key == "size") parsed.size = std::stoull(value);
    }
    records.remove_prefix(length);
  }
  return parsed;
}

}  // namespace ipu::runtime::files
