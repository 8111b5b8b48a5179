#include "common/result.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace ipu {
namespace {

Result<int> parsePositive(const std::string& text) {
  int value = 0;
  try {
    value = std::stoi(text);
  } catch (const std::exception&) {
    return makeError(ErrorCode::kInvalidArgument, "'" + text + "' is not a number");
  }
  if (value <= 0) return makeError(ErrorCode::kInvalidArgument, "must be positive");
  return value;
}

TEST(ResultTest, CarriesValueOrError) {
  auto good = parsePositive("42");
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);

  auto bad = parsePositive("forty");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().toString(), "InvalidArgument: 'forty' is not a number");
  EXPECT_EQ(bad.valueOr(7), 7);
}

TEST(ResultTest, MovesOnlyTypesThrough) {
  Result<std::unique_ptr<int>> owned = std::make_unique<int>(5);
  std::unique_ptr<int> taken = std::move(owned).value();
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(*taken, 5);
}

TEST(ResultTest, VoidResultIsStatus) {
  Status fine;
  EXPECT_TRUE(fine.ok());
  Status failed = makeError(ErrorCode::kUnavailable, "connection refused");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().retryClass(), RetryClass::kTransient);
}

TEST(ErrorTest, EachCodeHasARetryDecision) {
  EXPECT_EQ(retryClassOf(ErrorCode::kConflict), RetryClass::kConflict);
  EXPECT_EQ(retryClassOf(ErrorCode::kGone), RetryClass::kGone);
  EXPECT_EQ(retryClassOf(ErrorCode::kNotFound), RetryClass::kNotFound);
  EXPECT_EQ(retryClassOf(ErrorCode::kResourceExhausted), RetryClass::kTransient);
  EXPECT_EQ(retryClassOf(ErrorCode::kDeadlineExceeded), RetryClass::kTransient);
  EXPECT_EQ(retryClassOf(ErrorCode::kInvalidArgument), RetryClass::kTerminal);
  EXPECT_EQ(retryClassOf(ErrorCode::kPermissionDenied), RetryClass::kTerminal);
  EXPECT_EQ(toString(ErrorCode::kAlreadyExists), "AlreadyExists");
}

}  // namespace
}  // namespace ipu
