#include "files/tree_archive.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/ustar.h"

namespace ipu::runtime::files {
namespace {

std::string errnoText(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

class Sink {
 public:
  explicit Sink(int fd) : fd_(fd) {}
  void write(const char* data, std::size_t size) {
    while (size > 0) {
      const ssize_t written = ::write(fd_, data, size);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) throw std::runtime_error(errnoText("cannot write the archive"));
      data += written;
      size -= static_cast<std::size_t>(written);
    }
  }
  void write(const std::string& bytes) { write(bytes.data(), bytes.size()); }

 private:
  int fd_;
};

class Walker {
 public:
  Walker(Sink& sink, const std::function<void(const std::string&)>& warn) : sink_(sink), warn_(warn) {}

  void add(const std::string& onDisk, const std::string& inArchive, bool top) {
    // The path asked for is followed when it is a link (it is what the user named); nothing under it is.
    struct stat info {};
    if ((top ? ::stat(onDisk.c_str(), &info) : ::lstat(onDisk.c_str(), &info)) != 0) {
      if (top) throw std::runtime_error(errnoText("cannot read " + onDisk));
      warn_("left out " + onDisk + ": " + std::strerror(errno));
      return;
    }
    Entry entry{.path = inArchive,
                .mode = static_cast<std::uint32_t>(info.st_mode & 07777),
                .mtime = static_cast<std::int64_t>(info.st_mtim.tv_sec)};
    if (S_ISDIR(info.st_mode)) return addDirectory(onDisk, entry, top);
    if (S_ISREG(info.st_mode)) return addFile(onDisk, entry, top);
    if (S_ISLNK(info.st_mode)) {
      std::vector<char> target(static_cast<std::size_t>(std::max<off_t>(info.st_size, 255)) + 1);
      const ssize_t length = ::readlink(onDisk.c_str(), target.data(), target.size());
      if (length < 0) {
        warn_("left out " + onDisk + ": " + std::strerror(errno));
        return;
      }
      entry.type = EntryType::kSymlink;
      entry.linkTarget.assign(target.data(), static_cast<std::size_t>(length));
      sink_.write(headerBlocks(entry));
      return;
    }
    if (top) throw std::runtime_error(onDisk + " is neither a file nor a directory");
    warn_("left out " + onDisk + ": neither a file, a directory nor a symbolic link");
  }

  ArchiveSummary summary;

 private:
  void addDirectory(const std::string& onDisk, Entry entry, bool top) {
    DIR* dir = ::opendir(onDisk.c_str());
    if (dir == nullptr) {
      if (top) throw std::runtime_error(errnoText("cannot read the directory " + onDisk));
      warn_("left out " + onDisk + ": " + std::strerror(errno));
      return;
    }
    std::vector<std::string> names;
    while (const dirent* found = ::readdir(dir)) {
      const std::string name = found->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    entry.type = EntryType::kDirectory;
    sink_.write(headerBlocks(entry));
    ++summary.directories;
    for (const std::string& name : names) {
      add(onDisk + "/" + name, entry.path == "." ? name : entry.path + "/" + name, false);
    }
  }

  void addFile(const std::string& onDisk, Entry entry, bool top) {
    const int fd = ::open(onDisk.c_str(), O_RDONLY | O_CLOEXEC | (top ? 0 : O_NOFOLLOW));
    if (fd < 0) {
      if (top) throw std::runtime_error(errnoText("cannot open " + onDisk));
      warn_("left out " + onDisk + ": " + std::strerror(errno));
      return;
    }
    struct stat info {};
    ::fstat(fd, &info);
    entry.type = EntryType::kFile;
    entry.size = static_cast<std::uint64_t>(info.st_size);
    try {
      sink_.write(headerBlocks(entry));
      std::uint64_t left = entry.size;
      std::vector<char> buffer(1 << 16);
      while (left > 0) {
        const ssize_t got =
            ::read(fd, buffer.data(), static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size())));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
          warn_(onDisk + " shrank while it was read: the rest of its " + std::to_string(entry.size) +
                " bytes are zeros");
          const std::string zeros(static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size())),
                                  '\0');
          while (left > 0) {
            const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(left, zeros.size()));
            sink_.write(zeros.data(), chunk);
            left -= chunk;
          }
          break;
        }
        sink_.write(buffer.data(), static_cast<std::size_t>(got));
        left -= static_cast<std::uint64_t>(got);
      }
      char probe = 0;
      if (::read(fd, &probe, 1) > 0)
        warn_(onDisk + " grew while it was read: copied its first " + std::to_string(entry.size) + " bytes");
      sink_.write(std::string(paddingAfter(entry.size), '\0'));
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    ++summary.files;
    summary.bytes += entry.size;
  }

  Sink& sink_;
  const std::function<void(const std::string&)>& warn_;
};

// The archive name of a single file: its last component ("out.pop" of "profiles/out.pop").
std::string lastComponent(std::string path) {
  while (path.size() > 1 && path.ends_with('/')) path.pop_back();
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

ArchiveSummary writeTreeArchive(const std::string& path, int fd,
                                const std::function<void(const std::string&)>& warn) {
  Sink sink(fd);
  Walker walker(sink, warn);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw std::runtime_error(errnoText("cannot read " + path));
  walker.add(path, S_ISDIR(info.st_mode) ? "." : lastComponent(path), true);
  sink.write(endOfArchive());
  return walker.summary;
}

}  // namespace ipu::runtime::files
