#include "kube/list_parse.h"

#include <gtest/gtest.h>

namespace ipu::kube {
namespace {

TEST(ListParseTest, TheNamedFieldsOfEveryItemAreLeftOutAndNothingElse) {
  const std::string body =
      R"({"kind":"PodList","metadata":{"resourceVersion":"9","managedFields":"list's own"},
    "spec":"not an item's",
    "items":[
      {"metadata":{"name":"a","managedFields":[{"manager":"kubelet"}],"labels":{"spec":"kept"}},
       "spec":{"containers":[{"name":"w"}]},"status":{"phase":"Running","spec":"kept too"}},
      {"spec":{},"metadata":{"name":"b"}},
      "not an object",
      {"metadata":{"name":"c"}}
    ]})";
  const Json list = parseListSkipping(body, {"spec", "metadata.managedFields"});
  ASSERT_FALSE(list.is_discarded());
  EXPECT_EQ(list["metadata"]["managedFields"], "list's own") << "the list's own members stay";
  EXPECT_EQ(list["spec"], "not an item's");
  ASSERT_EQ(list["items"].size(), 4u);
  const Json& a = list["items"][0];
  EXPECT_FALSE(a.contains("spec"));
  EXPECT_FALSE(a["metadata"].contains("managedFields"));
  EXPECT_EQ(a["metadata"]["name"], "a");
  EXPECT_EQ(a["metadata"]["labels"]["spec"], "kept") << "deeper members of the same name stay";
  EXPECT_EQ(a["status"]["spec"], "kept too");
  EXPECT_EQ(list["items"][1], (Json{{"metadata", {{"name", "b"}}}}));
  EXPECT_EQ(list["items"][2], "not an object");
  EXPECT_EQ(list["items"][3], (Json{{"metadata", {{"name", "c"}}}}));
}

TEST(ListParseTest, WithNothingToSkipItIsAPlainParse) {
  const std::string body = R"({"items":[{"metadata":{"name":"a"},"spec":{"x":[1,2.5,true,null]}}]})";
  EXPECT_EQ(parseListSkipping(body, {}), Json::parse(body));
}

TEST(ListParseTest, MalformedBodiesAreDiscardedNotThrown) {
  for (const std::string body :
       {"", "{", R"({"items":[{"spec":)", "not json", R"({"items":[{"metadata":}]})"}) {
    EXPECT_TRUE(parseListSkipping(body, {"spec"}).is_discarded()) << body;
  }
}

// A watch event's object, one at a time: the same fields left out of it, nothing of the event's own.
TEST(ListParseTest, AWatchEventsObjectLosesTheNamedFieldsAndNothingElse) {
  const std::string line =
      R"({"type":"MODIFIED","spec":"the event's own","object":{"metadata":{"name":"a","resourceVersion":"8",
      "managedFields":[{"manager":"kubelet"}],"labels":{"spec":"kept"}},"spec":{"containers":[{"name":"w"}]},
      "status":{"phase":"Running","spec":"kept too"}}})";
  const Json event = parseWatchEventSkipping(line, {"spec", "metadata.managedFields"});
  ASSERT_FALSE(event.is_discarded());
  EXPECT_EQ(event["type"], "MODIFIED");
  EXPECT_EQ(event["spec"], "the event's own");
  EXPECT_EQ(event["object"], Json::parse(R"({"metadata":{"name":"a","resourceVersion":"8",
      "labels":{"spec":"kept"}},"status":{"phase":"Running","spec":"kept too"}})"));
  EXPECT_TRUE(parseWatchEventSkipping(R"({"type":"ADDED","object":{"spec":)", {"spec"}).is_discarded());
}

}  // namespace
}  // namespace ipu::kube
