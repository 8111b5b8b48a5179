#include "metrics/bind_address.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ipu::metrics {
namespace {

using ::testing::HasSubstr;

struct Parsed {
  const char* text;
  BindAddress expected;
  const char* shown;  // toString()
};

TEST(ParseBindAddressTest, ControllerRuntimeForms) {
  const std::vector<Parsed> table = {
      {":8080", {.host = "", .port = 8080}, ":8080"},
      {"127.0.0.1:8081", {.host = "127.0.0.1", .port = 8081}, "127.0.0.1:8081"},
      {"0.0.0.0:1", {.host = "0.0.0.0", .port = 1}, "0.0.0.0:1"},
      {"localhost:65535", {.host = "localhost", .port = 65535}, "localhost:65535"},
      {"metrics.svc-1.local:9090", {.host = "metrics.svc-1.local", .port = 9090}, "metrics.svc-1.local:9090"},
      {"[::1]:8081", {.host = "::1", .port = 8081}, "[::1]:8081"},
      {"[::]:8080", {.host = "::", .port = 8080}, "[::]:8080"},
      {"[fe80::1:2]:80", {.host = "fe80::1:2", .port = 80}, "[fe80::1:2]:80"},
      {":08080", {.host = "", .port = 8080}, ":8080"},  // Go reads the port as decimal too
      {"0", {.disabled = true}, "0"},
  };
  for (const auto& row : table) {
    const auto parsed = parseBindAddress(row.text);
    ASSERT_TRUE(parsed.ok()) << row.text << ": " << parsed.error().message;
    EXPECT_EQ(*parsed, row.expected) << row.text;
    EXPECT_EQ(parsed->toString(), row.shown) << row.text;
  }
}

struct Malformed {
  std::string text;
  const char* reason;
};

TEST(ParseBindAddressTest, MalformedValuesAreInvalidArgumentsNamingTheValueAndTheShape) {
  const std::vector<Malformed> table = {
      {"", "it is empty"},
      {"8080", "there is no port"},
      {"localhost", "there is no port"},
      {":", "there is no port"},
      {"127.0.0.1:", "there is no port"},
      {":0", "out of range"},
      {":65536", "out of range"},
      {":99999999999999999999999", "out of range"},
      {":-1", "is not a number"},
      {":+80", "is not a number"},
      {":80a", "is not a number"},
      {": 80", "is not a number"},
      {":8080 ", "is not a number"},
      {"[]:80", "the brackets hold no address"},
      {"[::1]", "no \":port\" after the brackets"},
      {"[::1]80", "no \":port\" after the brackets"},
      {"[::1]:", "there is no port"},
      {"[::1:80", "\"[\" is not closed"},
      {"[127.0.0.1]:80", "is not an IPv6 address"},
      {"[fe80::zz]:80", "is not an IPv6 address"},
      {"::1:8080", "an IPv6 host needs brackets"},
      {"a:b:80", "an IPv6 host needs brackets"},
      {"300.1.1.1:80", "is not a host name or IPv4 address"},
      {"1.2.3:80", "is not a host name or IPv4 address"},
      {"host name:80", "is not a host name or IPv4 address"},
      {"http://x:80", "an IPv6 host needs brackets"},
      {"00", "there is no port"},
      {std::string("a\0b:80", 6), "is not a host name or IPv4 address"},
  };
  for (const auto& row : table) {
    const auto parsed = parseBindAddress(row.text);
    ASSERT_FALSE(parsed.ok()) << row.text << " parsed as " << parsed->toString();
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << row.text;
    EXPECT_THAT(parsed.error().message, HasSubstr("invalid bind address \"" + row.text + "\"")) << row.text;
    EXPECT_THAT(parsed.error().message, HasSubstr(row.reason)) << row.text;
    EXPECT_THAT(parsed.error().message, HasSubstr("expected [host]:port")) << row.text;
  }
}

}  // namespace
}  // namespace ipu::metrics
