#include "mpi_output.h"

#include <gtest/gtest.h>

namespace ipu::testing {
namespace {

using Lines = std::map<int, std::vector<std::string>>;

TEST(MpiOutputTest, OneTaggedLinePerRank) {
  EXPECT_EQ(linesByRank("[1,0]<stdout>:a\n[1,1]<stdout>:b\n[1,0]<stdout>:c\n"),
            (Lines{{0, {"a", "c"}}, {1, {"b"}}}));
}

TEST(MpiOutputTest, ChunksOfALineAndRanksSharingALineAreSplitAtTheirTags) {
  // As OpenMPI forwards an unbuffered print word by word, with another rank's chunk in between.
  EXPECT_EQ(linesByRank("[1,1]<stdout>:rank[1,0]<stdout>:rank 0 of 2\n[1,1]<stdout>: 1 of 2\n"),
            (Lines{{0, {"rank 0 of 2"}}, {1, {"rank 1 of 2"}}}));
  EXPECT_EQ(linesByRank("[1,0]<stdout>:x[1,1]<stdout>:y\n"), (Lines{{0, {"x"}}, {1, {"y"}}}));
}

TEST(MpiOutputTest, UntaggedTextIsNotARanks) {
  EXPECT_EQ(linesByRank("ipu-runtime launch: running mpirun\n[1,0]<stdout>:only\nunrelated\n"),
            (Lines{{0, {"only"}}}));
  EXPECT_EQ(linesByRank(""), Lines{});
}

}  // namespace
}  // namespace ipu::testing
