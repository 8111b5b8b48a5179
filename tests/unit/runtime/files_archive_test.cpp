// `ipu-runtime files` and `kubectl ipu cp`'s two ends: a tree written as ustar and extracted again
// byte-identical (long names, empty files, modes, links left as they are); the stream read as hostile (no
// path outside the destination, no link followed, no damaged or cut stream taken for whole); and GNU tar
// reading what the runtime writes, and the extractor reading what GNU tar writes.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/archive_extractor.h"
#include "files/tree_archive.h"
#include "files/ustar.h"

namespace ipu::runtime::files {
namespace {

namespace fs = std::filesystem;

class FilesArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ipu-files-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void write(const fs::path& path, const std::string& bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
  }
  static std::string read(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    std::stringstream bytes;
    bytes << file.rdbuf();
    return bytes.str();
  }

  // The archive of `path` as the runtime writes it to a pipe's worth of fd: here a file.
  std::string archiveOf(const fs::path& path, std::vector<std::string>* warnings = nullptr) {
    const fs::path out = dir_ / "archive.tar";
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    writeTreeArchive(path, fd, [&](const std::string& warning) {
      if (warnings) warnings->push_back(warning);
    });
    ::close(fd);
    return read(out);
  }

  // Fed in odd-sized pieces, as a pipe delivers it.
  static ExtractSummary extract(const std::string& archive, const fs::path& destination,
                                std::vector<std::string>* warnings = nullptr) {
    ArchiveExtractor extractor(destination, [&](const std::string& warning) {
      if (warnings) warnings->push_back(warning);
    });
    for (std::size_t at = 0; at < archive.size(); at += 777)
      extractor.feed(std::string_view(archive).substr(at, 777));
    return extractor.finish();
  }

  fs::path dir_;
};

std::string randomBytes(std::size_t size, unsigned seed) {
  std::mt19937 random(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

TEST_F(FilesArchiveTest, ATreeComesBackByteIdenticalWithLongNamesModesAndEmptyFiles) {
  const fs::path source = dir_ / "profiles";
  const std::string longName(140, 'n');                                          // past ustar's 100-byte name
  const std::string deep = std::string(120, 'd') + "/" + std::string(150, 'e');  // past prefix + name: pax
  write(source / "run.pop", randomBytes(300001, 1));
  write(source / "empty", "");
  write(source / "sub" / longName, randomBytes(512, 2));
  write(source / deep / "checkpoint.bin", randomBytes(70000, 3));
  fs::create_directories(source / "empty-dir");
  ::chmod((source / "run.pop").c_str(), 0750);
  fs::create_symlink("/etc/passwd", source / "link");

  std::vector<std::string> warnings;
  const std::string archive = archiveOf(source);
  EXPECT_EQ(archive.size() % kBlock, 0u);
  const ExtractSummary summary = extract(archive, dir_ / "copy", &warnings);
  EXPECT_EQ(summary.files, 4u);
  EXPECT_EQ(summary.bytes, 300001u + 512 + 70000);
  EXPECT_EQ(summary.skipped, 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("a symbolic link to /etc/passwd"), std::string::npos) << warnings[0];
  for (const fs::path& relative : {fs::path("run.pop"), fs::path("empty"), fs::path("sub") / longName,
                                   fs::path(deep) / "checkpoint.bin"}) {
    EXPECT_EQ(read(dir_ / "copy" / relative), read(source / relative)) << relative;
  }
  EXPECT_TRUE(fs::is_directory(dir_ / "copy" / "empty-dir"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ / "copy" / "link")));
  EXPECT_EQ(fs::status(dir_ / "copy" / "run.pop").permissions() & fs::perms::all,
            fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
}

TEST_F(FilesArchiveTest, OneFileGoesToTheNamedPathOrIntoAnExistingDirectory) {
  write(dir_ / "in" / "result.txt", "42\n");
  const std::string archive = archiveOf(dir_ / "in" / "result.txt");
  extract(archive, dir_ / "renamed.txt");
  EXPECT_EQ(read(dir_ / "renamed.txt"), "42\n");
  fs::create_directories(dir_ / "into");
  extract(archive, dir_ / "into");
  EXPECT_EQ(read(dir_ / "into" / "result.txt"), "42\n");
}

TEST_F(FilesArchiveTest, GnuTarReadsWhatTheRuntimeWritesAndTheExtractorReadsWhatGnuTarWrites) {
  const fs::path source = dir_ / "tree";
  const std::string deep = std::string(120, 'd') + "/" + std::string(150, 'e');
  write(source / "a.bin", randomBytes(5000, 4));
  write(source / deep / "b.bin", randomBytes(1234, 5));
  std::ofstream(dir_ / "ours.tar", std::ios::binary) << archiveOf(source);
  fs::create_directories(dir_ / "by-tar");
  ASSERT_EQ(
      std::system(("tar -xf " + (dir_ / "ours.tar").string() + " -C " + (dir_ / "by-tar").string()).c_str()),
      0);
  EXPECT_EQ(read(dir_ / "by-tar" / "a.bin"), read(source / "a.bin"));
  EXPECT_EQ(read(dir_ / "by-tar" / deep / "b.bin"), read(source / deep / "b.bin"));

  for (const char* format : {"pax", "gnu", "ustar"}) {
    if (std::string(format) == "ustar")
      fs::remove_all(source / std::string(120, 'd'));  // ustar cannot hold it
    const fs::path tarball = dir_ / (std::string(format) + ".tar");
    ASSERT_EQ(std::system(("tar --format=" + std::string(format) + " -cf " + tarball.string() + " -C " +
                           source.string() + " .")
                              .c_str()),
              0);
    const fs::path into = dir_ / (std::string("from-") + format);
    extract(read(tarball), into);
    EXPECT_EQ(read(into / "a.bin"), read(source / "a.bin")) << format;
    if (std::string(format) != "ustar") {
      EXPECT_EQ(read(into / deep / "b.bin"), read(source / deep / "b.bin")) << format;
    }
  }
}

TEST_F(FilesArchiveTest, SizesOfEightGibibytesAndMoreRoundTripInBase256) {
  const std::uint64_t size = 9ULL << 30;
  const std::string blocks = headerBlocks({.path = "big.pop", .type = EntryType::kFile, .size = size});
  ASSERT_EQ(blocks.size(), kBlock);
  const Header header = parseHeader(blocks);
  EXPECT_EQ(header.entry.size, size);
  EXPECT_EQ(header.entry.path, "big.pop");
}

// A stream of one entry with `path` and `bytes`, then the end.
std::string oneEntry(const std::string& path, const std::string& bytes, EntryType type = EntryType::kFile) {
  return headerBlocks({.path = path, .type = type, .size = bytes.size()}) + bytes +
         std::string(paddingAfter(bytes.size()), '\0') + endOfArchive();
}

TEST_F(FilesArchiveTest, AHostileStreamWritesNothingOutsideTheDestination) {
  const fs::path outside = dir_ / "outside";
  fs::create_directories(outside);
  const fs::path destination = dir_ / "dest";
  const std::string dirHeader = headerBlocks({.path = ".", .type = EntryType::kDirectory});
  for (const std::string& path :
       {std::string("../outside/x"), std::string("/tmp/x"), std::string("a/../../x")}) {
    EXPECT_THROW(extract(dirHeader + oneEntry(path, "pwned"), destination), std::runtime_error) << path;
  }
  // A link already in the destination is never followed on the way to a file.
  fs::create_directories(destination);
  fs::create_directory_symlink(outside, destination / "link");
  EXPECT_THROW(extract(dirHeader + oneEntry("link/x", "pwned"), destination), std::runtime_error);
  write(outside / "target", "mine");
  fs::create_symlink(outside / "target", destination / "file-link");
  EXPECT_THROW(extract(dirHeader + oneEntry("file-link", "pwned"), destination), std::runtime_error);
  EXPECT_EQ(read(outside / "target"), "mine");
  EXPECT_FALSE(fs::exists(outside / "x"));
  // No set-user-ID bit from a pod.
  std::string setuid = headerBlocks({.path = "tool", .type = EntryType::kFile, .size = 2, .mode = 04755});
  extract(dirHeader + setuid + "hi" + std::string(paddingAfter(2), '\0') + endOfArchive(), destination);
  EXPECT_EQ(fs::status(destination / "tool").permissions() & fs::perms::set_uid, fs::perms::none);
}

TEST_F(FilesArchiveTest, ADamagedOrCutStreamIsAnErrorNotASilentlyShortCopy) {
  std::string archive = oneEntry("f", "0123456789");
  std::string damaged = archive;
  damaged[10] ^= 1;  // inside the name: the checksum no longer matches
  EXPECT_THROW(extract(damaged, dir_ / "d1"), std::runtime_error);
  EXPECT_THROW(extract(archive.substr(0, kBlock + 5), dir_ / "d2"), std::runtime_error);
  EXPECT_THROW(extract(std::string(kBlock, 'x'), dir_ / "d3"), std::runtime_error);
  EXPECT_THROW(extract(endOfArchive(), dir_ / "d4"), std::runtime_error) << "an empty archive";
}

}  // namespace
}  // namespace ipu::runtime::files
