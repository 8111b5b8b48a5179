#include "files/archive_extractor.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd/fd.h"
#include "files/ustar.h"

namespace ipu::runtime::files {
namespace {

std::string errnoText(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

std::string joined(const std::vector<std::string>& components) {
  std::string path;
  for (const std::string& component : components) path += (path.empty() ? "" : "/") + component;
  return path;
}

void writeAll(int fd, const char* data, std::size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) throw std::runtime_error(errnoText("cannot write " + path));
    data += written;
    size -= static_cast<std::size_t>(written);
  }
}

}  // namespace

std::vector<std::string> safeComponents(const std::string& path) {
  if (path.starts_with('/')) throw std::runtime_error("the archive names an absolute path: " + path);
  std::vector<std::string> components;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string component = path.substr(start, slash - start);
    if (component == "..")
      throw std::runtime_error("the archive names a path outside its directory: " + path);
    if (!component.empty() && component != ".") components.push_back(component);
    start = slash + 1;
  }
  return components;
}

class ArchiveExtractor::State {
 public:
  State(std::string destination, std::function<void(const std::string&)> warn)
      : destination_(std::move(destination)), warn_(std::move(warn)) {}

  void feed(std::string_view bytes) {
    while (!bytes.empty()) {
      if (phase_ == Phase::kEnd) return;  // trailing blocks after the end: ignored, as tar does
      if (phase_ == Phase::kHeader || phase_ == Phase::kPax) {
        const std::size_t want = (phase_ == Phase::kHeader ? kBlock : paxSize_) - buffer_.size();
        const std::size_t take = std::min(want, bytes.size());
        buffer_.append(bytes.substr(0, take));
        bytes.remove_prefix(take);
        if (buffer_.size() < (phase_ == Phase::kHeader ? kBlock : paxSize_)) return;
        phase_ == Phase::kHeader ? header() : paxDone();
        continue;
      }
      // Content of a file (written or skipped), then the padding to the next block.
      const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(left_, bytes.size()));
      if (phase_ == Phase::kContent && out_.get() >= 0) writeAll(out_.get(), bytes.data(), take, current_);
      bytes.remove_prefix(take);
      left_ -= take;
      if (left_ == 0) endOfContent();
    }
  }

  ExtractSummary finish() {
    if (phase_ != Phase::kEnd) throw std::runtime_error("the archive ended early (was the copy cut?)");
    return summary_;
  }

 private:
  enum class Phase { kHeader, kPax, kContent, kPadding, kEnd };

  void header() {
    const Header parsed = parseHeader(buffer_);
    buffer_.clear();
    if (parsed.kind == Header::Kind::kEnd) {
      // Two zero blocks end an archive; one is enough to know it ended.
      if (root_.get() < 0) throw std::runtime_error("the archive is empty");
      phase_ = Phase::kEnd;
      return;
    }
    if (parsed.kind != Header::Kind::kEntry) {  // records about the next entry
      paxSize_ = static_cast<std::size_t>(parsed.entry.size);
      recordsKind_ = parsed.kind;
      if (paxSize_ > (1u << 20)) throw std::runtime_error("a pax header of more than 1 MiB");
      padding_ = paddingAfter(parsed.entry.size);
      phase_ = paxSize_ == 0 ? Phase::kHeader : Phase::kPax;
      return;
    }
    Entry entry = parsed.entry;
    if (pax_.path) entry.path = *pax_.path;
    if (pax_.size) entry.size = *pax_.size;
    if (pax_.linkPath) entry.linkTarget = *pax_.linkPath;
    pax_ = {};
    begin(entry);
  }

  void paxDone() {
    const std::string text = buffer_.substr(0, buffer_.find('\0'));
    if (recordsKind_ == Header::Kind::kPaxRecords) {
      const PaxRecords records = parsePaxRecords(buffer_);
      if (records.path) pax_.path = records.path;
      if (records.linkPath) pax_.linkPath = records.linkPath;
      if (records.size) pax_.size = records.size;
    }
    if (recordsKind_ == Header::Kind::kGnuLongName) pax_.path = text;
    if (recordsKind_ == Header::Kind::kGnuLongLink) pax_.linkPath = text;
    buffer_.clear();
    left_ = padding_;
    phase_ = left_ == 0 ? Phase::kHeader : Phase::kPadding;
  }

  // Where the archive goes, decided by its first entry.
  void placeRoot(const Entry& first) {
    struct stat info {};
    const bool exists = ::stat(destination_.c_str(), &info) == 0;
    if (first.type == EntryType::kDirectory && safeComponents(first.path).empty()) {
      if (!exists && ::mkdir(destination_.c_str(), 0755) != 0)
        throw std::runtime_error(errnoText("cannot make the directory " + destination_));
      if (exists && !S_ISDIR(info.st_mode))
        throw std::runtime_error(destination_ + " exists and is not a directory; the copy is a directory");
      root_ = Fd(::open(destination_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      directoryArchive_ = true;
    } else if (exists && S_ISDIR(info.st_mode)) {
      root_ = Fd(::open(destination_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    } else {
      const std::size_t slash = destination_.rfind('/');
      const std::string parent = slash == std::string::npos ? "."
                                 : slash == 0               ? "/"
                                                            : destination_.substr(0, slash);
      root_ = Fd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      fileName_ = destination_.substr(slash == std::string::npos ? 0 : slash + 1);
    }
    if (root_.get() < 0) throw std::runtime_error(errnoText("cannot open the destination " + destination_));
  }

  // The directory that holds `components`' last one, made as needed, never through a link.
  Fd parentOf(const std::vector<std::string>& components, const std::string& path) {
    Fd dir(::dup(root_.get()));
    for (std::size_t i = 0; i + 1 < components.size(); ++i) {
      if (::mkdirat(dir.get(), components[i].c_str(), 0755) != 0 && errno != EEXIST)
        throw std::runtime_error(errnoText("cannot make the directory for " + path));
      Fd next(::openat(dir.get(), components[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (next.get() < 0)
        throw std::runtime_error(errnoText("cannot write " + path + " (" + components[i] +
                                           " is not a directory of the destination)"));
      dir = std::move(next);
    }
    return dir;
  }

  void begin(const Entry& entry) {
    if (root_.get() < 0)
      placeRoot(entry);
    else if (!directoryArchive_)
      throw std::runtime_error("the archive holds more than the one file it began with");
    std::vector<std::string> components = safeComponents(entry.path);
    if (!directoryArchive_) {
      if (components.empty()) throw std::runtime_error("the archive's file has no name");
      components = {fileName_.empty() ? components.back() : fileName_};
    }
    current_ = joined(components);
    // A file's content is written; another kind's (a hard link's, a device's: none) skipped.
    left_ = entry.type == EntryType::kFile || entry.type == EntryType::kOther ? entry.size : 0;
    padding_ = paddingAfter(left_);
    if (entry.type == EntryType::kDirectory) {
      if (!components.empty()) {
        const Fd parent = parentOf(components, current_);
        if (::mkdirat(parent.get(), components.back().c_str(), (entry.mode & 0777) | 0700) != 0 &&
            errno != EEXIST)
          throw std::runtime_error(errnoText("cannot make the directory " + current_));
        struct stat info {};
        if (::fstatat(parent.get(), components.back().c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISDIR(info.st_mode))
          throw std::runtime_error(current_ + " exists in the destination and is not a directory");
      }
      ++summary_.directories;
    } else if (entry.type == EntryType::kFile) {
      if (components.empty()) throw std::runtime_error("the archive names a file without a name");
      const Fd parent = parentOf(components, current_);
      out_ = Fd(::openat(parent.get(), components.back().c_str(),
                         O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (out_.get() < 0) throw std::runtime_error(errnoText("cannot write " + current_));
      mode_ = entry.mode & 0777;  // no set-user-ID, set-group-ID or sticky bit from a pod
      fileBytes_ = entry.size;
      mtime_ = entry.mtime;
    } else {
      warn_("skipped " + entry.path +
            (entry.type == EntryType::kSymlink ? " (a symbolic link to " + entry.linkTarget + ")"
                                               : " (neither a file nor a directory)"));
      ++summary_.skipped;
    }
    phase_ = Phase::kContent;
    if (left_ == 0) endOfContent();
  }

  void endOfContent() {
    if (phase_ == Phase::kContent) {
      if (out_.get() >= 0) {
        ::fchmod(out_.get(), mode_);
        const timespec times[2] = {{mtime_, 0}, {mtime_, 0}};
        ::futimens(out_.get(), times);
        if (::close(out_.release()) != 0) throw std::runtime_error(errnoText("cannot write " + current_));
        ++summary_.files;
        summary_.bytes += fileBytes_;
      }
      left_ = padding_;
      phase_ = Phase::kPadding;
      if (left_ > 0) return;
    }
    phase_ = Phase::kHeader;
  }

  const std::string destination_;
  const std::function<void(const std::string&)> warn_;
  Phase phase_ = Phase::kHeader;
  std::string buffer_;
  std::size_t paxSize_ = 0;
  Header::Kind recordsKind_ = Header::Kind::kPaxRecords;
  PaxRecords pax_;
  Fd root_;
  bool directoryArchive_ = false;
  std::string fileName_;  // a one-file archive to a path that is not a directory: the file's new name
  std::string current_;
  Fd out_;
  std::uint32_t mode_ = 0644;
  std::int64_t mtime_ = 0;
  std::uint64_t fileBytes_ = 0;
  std::uint64_t left_ = 0;
  std::size_t padding_ = 0;
  ExtractSummary summary_;
};

ArchiveExtractor::ArchiveExtractor(std::string destination, std::function<void(const std::string&)> warn)
    : state_(std::make_unique<State>(std::move(destination), std::move(warn))) {}
ArchiveExtractor::~ArchiveExtractor() = default;
void ArchiveExtractor::feed(std::string_view bytes) {
  state_->feed(bytes);
}
ExtractSummary ArchiveExtractor::finish() {
  return state_->finish();
}

}  // namespace ipu::runtime::files
