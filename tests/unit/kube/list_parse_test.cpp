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

// Every kind of value, empty containers, escapes and nesting: the tree is the one a whole parse gives with
// the named fields erased after it.
TEST(ListParseTest, TheTreeIsAWholeParsesWithTheNamedFieldsErased) {
  const std::string item =
      R"({"metadata":{"name":"w-\u00e9\n","uid":"u","managedFields":[{"a":{"b":[{},[]]}}],"labels":{},
      "annotations":{"x":"y"}},"spec":{"containers":[{"name":"w","args":["a","b"],"resources":{}}],"n":-3},
      "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"big":18446744073709551615,
      "neg":-9223372036854775808,"f":1.5e-3,"t":true,"f2":false,"z":null,"e":[],"o":{}}})";
  std::string body = R"({"kind":"PodList","metadata":{"resourceVersion":"7","continue":""},"items":[)";
  for (int i = 0; i < 20; ++i) body += (i ? "," : "") + item;
  body += "]}";
  Json expected = Json::parse(body);
  for (Json& each : expected["items"]) {
    each.erase("spec");
    each["metadata"].erase("managedFields");
    each["status"].erase("conditions");
  }
  EXPECT_EQ(parseListSkipping(body, {"spec", "metadata.managedFields", "status.conditions"}), expected);

  const std::string event = R"({"type":"ADDED","object":)" + item + "}";
  Json expectedEvent = Json::parse(event);
  expectedEvent["object"].erase("status");
  expectedEvent["object"]["metadata"].erase("annotations");
  EXPECT_EQ(parseWatchEventSkipping(event, {"status", "metadata.annotations"}), expectedEvent);
}

// The API server writes a list's metadata before its items: the token is read without reading them (a body
// cut right after the metadata still gives it).
TEST(ListParseTest, TheContinueTokenIsReadFromTheMetadataAloneWhenItComesFirst) {
  EXPECT_EQ(continueTokenAhead(R"({"kind":"PodList","metadata":{"resourceVersion":"9","continue":"c1",)"
                               R"("remainingItemCount":3},"items":[{"metadata":{"name":"a"}},)"),
            std::optional<std::string>("c1"));
  EXPECT_EQ(continueTokenAhead(R"({"metadata":{"resourceVersion":"9"},"items":[]})"),
            std::optional<std::string>(""))
      << "the last page";
  EXPECT_EQ(continueTokenAhead(R"({"items":[],"metadata":{"continue":"c1"}})"), std::nullopt)
      << "items first: only the whole parse tells";
  EXPECT_EQ(continueTokenAhead("not json"), std::nullopt);
  EXPECT_EQ(continueTokenAhead(R"(["metadata"])"), std::nullopt);
  EXPECT_EQ(continueTokenAhead(R"({"metadata":{"labels":{"continue":"not this"}}})"),
            std::optional<std::string>(""));
}

}  // namespace
}  // namespace ipu::kube
