#include "kube/rest_client.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "fake_transport.h"
#include "kube/object_skim.h"
#include "skipping_clock.h"

namespace ipu::kube {
namespace {

using namespace std::chrono_literals;
using testing::FakeTransport;
using testing::SkippingClock;

const ResourceRef kIpuJobs{"graphcore.ai", "v1alpha1", "ipujobs", true};

class RestClientTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_EQ(transport_->unexpected(), std::vector<std::string>{});
    EXPECT_EQ(transport_->remaining(), 0u) << "the client skipped scripted requests";
  }
  RestClient client(ClusterConfig config = {}) {
    return RestClient(transport_, config, ClientOptions{}, clock_);
  }

  std::shared_ptr<FakeTransport> transport_ = std::make_shared<FakeTransport>();
  SkippingClock clock_;
};

std::string statusBody(int code, const std::string& reason, const std::string& message) {
  return Json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
              {"code", code},     {"reason", reason},   {"message", message}}
      .dump();
}

TEST_F(RestClientTest, GetBuildsThePathAndParsesTheObject) {
  transport_->expect("GET", "/apis/graphcore.ai/v1alpha1/namespaces/ml/ipujobs/bert", 200,
                     R"({"kind":"IPUJob","metadata":{"name":"bert"}})");
  auto job = client().get(kIpuJobs, "ml", "bert");
  ASSERT_TRUE(job.ok()) << job.error().toString();
  EXPECT_EQ((*job)["metadata"]["name"], "bert");
  EXPECT_EQ(transport_->played()[0].seen.headers.at("Accept"), "application/json");
}

TEST_F(RestClientTest, MalformedJsonReplyIsAnInternalError) {
  transport_->expect("GET", "/api/v1/namespaces/ml/pods/p", 200, R"({"kind":"Pod", "metadata": {)");
  auto pod = client().get(ResourceRef::pods(), "ml", "p");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.error().code, ErrorCode::kInternal);
  EXPECT_NE(pod.error().message.find("not JSON"), std::string::npos);
}

TEST_F(RestClientTest, AListLeavesOutTheItemFieldsItWasToldToSkip) {
  transport_
      ->expect(
          "GET", "/api/v1/namespaces/ml/pods?limit=2", 200,
          R"({"items":[{"metadata":{"name":"a","managedFields":[{}]},"spec":{"containers":[]},"status":{}}]})")
      .expect("GET", "/api/v1/namespaces/ml/pods", 200, R"({"items":[{"spec":)")
      .expect("GET", "/api/v1/namespaces/ml/pods", 200, R"({"items":[{"spec":)");
  auto c = client();
  auto page =
      c.list(ResourceRef::pods(), "ml", {.limit = 2, .skipItemFields = {"spec", "metadata.managedFields"}});
  ASSERT_TRUE(page.ok()) << page.error().toString();
  EXPECT_EQ((*page)["items"][0], (Json{{"metadata", {{"name", "a"}}}, {"status", Json::object()}}));
  for (const auto& skipped : {std::vector<std::string>{"spec"}, std::vector<std::string>{}}) {
    auto malformed = c.list(ResourceRef::pods(), "ml", {.skipItemFields = skipped});
    ASSERT_FALSE(malformed.ok());
    EXPECT_EQ(malformed.error().code, ErrorCode::kInternal);
    EXPECT_NE(malformed.error().message.find("not JSON"), std::string::npos) << malformed.error().message;
  }
}

TEST_F(RestClientTest, StatusBodiesBecomeTypedErrors) {
  transport_
      ->expect("POST", "/api/v1/namespaces/ml/configmaps", 409, statusBody(409, "AlreadyExists", "exists"))
      .expect("PUT", "/api/v1/namespaces/ml/configmaps/c", 409,
              statusBody(409, "Conflict", "the object has been modified"))
      .expect("GET", "/api/v1/namespaces/ml/configmaps/gone", 404, statusBody(404, "NotFound", "not found"))
      .expect("GET", "/api/v1/namespaces/ml/secrets/s", 403, statusBody(403, "Forbidden", "no"))
      .expect("GET", "/api/v1/namespaces/ml/secrets/t", 401, statusBody(401, "Unauthorized", "who?"))
      .expect("GET", "/api/v1/namespaces/ml/pods?resourceVersion=1", 410,
              statusBody(410, "Expired", "too old"));
  auto c = client();
  Json cm = {{"metadata", {{"name", "c"}, {"resourceVersion", "5"}}}};
  EXPECT_EQ(c.create(ResourceRef::configMaps(), "ml", cm).error().code, ErrorCode::kAlreadyExists);
  auto conflict = c.update(ResourceRef::configMaps(), "ml", cm);
  EXPECT_EQ(conflict.error().code, ErrorCode::kConflict);
  EXPECT_EQ(conflict.error().retryClass(), RetryClass::kConflict);
  EXPECT_NE(conflict.error().message.find("the object has been modified"), std::string::npos);
  EXPECT_EQ(c.get(ResourceRef::configMaps(), "ml", "gone").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(c.get(ResourceRef::secrets(), "ml", "s").error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(c.get(ResourceRef::secrets(), "ml", "t").error().code, ErrorCode::kUnauthenticated);
  auto gone = c.list(ResourceRef::pods(), "ml", ListOptions{.resourceVersion = "1"});
  EXPECT_EQ(gone.error().code, ErrorCode::kGone);
  EXPECT_EQ(gone.error().reason, "Expired");
}

TEST_F(RestClientTest, ACreateThatDiscardsItsReplySendsTheObjectAndStillReadsErrors) {
  // The first reply is not JSON: a create that parsed it would fail; this one never reads it.
  transport_->expect("POST", "/api/v1/namespaces/ml/pods", 201, R"({"kind":"Pod", "metadata": {)")
      .expect("POST", "/api/v1/namespaces/ml/pods", 409, statusBody(409, "AlreadyExists", "exists"));
  auto c = client();
  const Json pod = {{"kind", "Pod"}, {"metadata", {{"name", "p"}}}};
  EXPECT_TRUE(c.createDiscardingReply(ResourceRef::pods(), "ml", pod).ok());
  EXPECT_EQ(Json::parse(transport_->played()[0].seen.body), pod);
  const Status taken = c.createDiscardingReply(ResourceRef::pods(), "ml", pod);
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().code, ErrorCode::kAlreadyExists);
}

TEST_F(RestClientTest, InvalidCarriesFieldCauses) {
  Json status = Json::parse(statusBody(422, "Invalid", "IPUJob.graphcore.ai \"j\" is invalid"));
  status["details"] = {{"causes",
                        {{{"field", "spec.ipusPerJobInstance"},
                          {"message", "must be a power of two"},
                          {"reason", "FieldValueInvalid"}}}}};
  transport_->expect("POST", "/apis/graphcore.ai/v1alpha1/namespaces/ml/ipujobs", 422, status.dump());
  auto created = client().create(kIpuJobs, "ml", Json{{"metadata", {{"name", "j"}}}});
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().code, ErrorCode::kInvalidArgument);
  ASSERT_EQ(created.error().causes.size(), 1u);
  EXPECT_EQ(created.error().causes[0].field, "spec.ipusPerJobInstance");
  EXPECT_EQ(created.error().causes[0].message, "must be a power of two");
}

TEST_F(RestClientTest, TooManyRequestsWaitsForRetryAfterThenRetries) {
  transport_
      ->expect("POST", "/api/v1/namespaces/ml/configmaps", 429,
               statusBody(429, "TooManyRequests", "slow down"), {{"retry-after", "3"}})
      .expect("POST", "/api/v1/namespaces/ml/configmaps", 201, R"({"metadata":{"name":"c"}})");
  auto created = client().create(ResourceRef::configMaps(), "ml", Json{{"metadata", {{"name", "c"}}}});
  ASSERT_TRUE(created.ok()) << created.error().toString();
  EXPECT_EQ(clock_.sleeps(), (std::vector<std::chrono::milliseconds>{3000ms}));
}

TEST_F(RestClientTest, ServerErrorsRetryReadsWithBackoffButNotWrites) {
  transport_
      ->expect("GET", "/api/v1/namespaces/ml/pods/p", 500, statusBody(500, "InternalError", "etcd hiccup"))
      .expect("GET", "/api/v1/namespaces/ml/pods/p", 503, "<html>bad gateway</html>")
      .expect("GET", "/api/v1/namespaces/ml/pods/p", 200, R"({"metadata":{"name":"p"}})")
      .expect("POST", "/api/v1/namespaces/ml/pods", 500, statusBody(500, "InternalError", "etcd hiccup"));
  auto c = client();
  EXPECT_TRUE(c.get(ResourceRef::pods(), "ml", "p").ok());
  EXPECT_EQ(clock_.sleeps(), (std::vector<std::chrono::milliseconds>{200ms, 400ms}));
  auto write = c.create(ResourceRef::pods(), "ml", Json{{"metadata", {{"name", "p"}}}});
  EXPECT_EQ(write.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(write.error().retryClass(), RetryClass::kTransient);
}

TEST_F(RestClientTest, DroppedConnectionsRetryReadsUpToTheLimit) {
  for (int i = 0; i <= 5; ++i) {
    transport_->expectFailure("GET", "/api/v1/nodes",
                              makeError(ErrorCode::kUnavailable, "connection refused"));
  }
  auto nodes = client().list(ResourceRef::nodes(), "");
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(clock_.sleeps().size(), 5u);
  EXPECT_EQ(clock_.sleeps().back(), 3200ms);
}

TEST_F(RestClientTest, WritesAreRetriedOnlyWhenTheRequestNeverReachedTheServer) {
  Error notSent = makeError(ErrorCode::kUnavailable, "Failed to write request body");
  notSent.reason = kRequestNotSent;
  transport_->expectFailure("POST", "/api/v1/namespaces/ml/pods", notSent)
      .expect("POST", "/api/v1/namespaces/ml/pods", 201, "{}")
      .expectFailure("POST", "/api/v1/namespaces/ml/pods",
                     makeError(ErrorCode::kUnavailable, "Failed to read response"));
  auto c = client();
  EXPECT_TRUE(c.create(ResourceRef::pods(), "ml", Json{{"metadata", {{"name", "p"}}}}).ok());
  EXPECT_EQ(c.create(ResourceRef::pods(), "ml", Json{{"metadata", {{"name", "p"}}}}).error().code,
            ErrorCode::kUnavailable);
}

TEST_F(RestClientTest, ListAllFollowsPagesAndRestartsOnAnExpiredContinueToken) {
  transport_
      ->expect(
          "GET", "/api/v1/namespaces/ml/pods?labelSelector=app%3Dbert%2Ctier%21%3Dweb&limit=2", 200,
          R"({"kind":"PodList","metadata":{"continue":"t1","resourceVersion":"10"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})")
      .expect("GET",
              "/api/v1/namespaces/ml/pods?labelSelector=app%3Dbert%2Ctier%21%3Dweb&limit=2&continue=t1", 410,
              statusBody(410, "Expired", "The provided continue parameter is too old"))
      .expect(
          "GET", "/api/v1/namespaces/ml/pods?labelSelector=app%3Dbert%2Ctier%21%3Dweb", 200,
          R"({"kind":"PodList","metadata":{"resourceVersion":"20"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}},{"metadata":{"name":"c"}}]})");
  auto pods = client().listAll(ResourceRef::pods(), "ml",
                               ListOptions{.labelSelector = "app=bert,tier!=web", .limit = 2});
  ASSERT_TRUE(pods.ok()) << pods.error().toString();
  EXPECT_EQ((*pods)["items"].size(), 3u);
  EXPECT_EQ((*pods)["metadata"]["resourceVersion"], "20");
}

TEST_F(RestClientTest, ApplyPatchAndDeleteSendTheRightBodies) {
  transport_
      ->expect(
          "PATCH",
          "/apis/graphcore.ai/v1alpha1/namespaces/ml/ipujobs/j/status?fieldManager=ipu-operator&force=true",
          200, "{}")
      .expect("PATCH", "/api/v1/namespaces/ml/pods/p", 200, "{}")
      .expect("DELETE", "/api/v1/namespaces/ml/pods/p", 200, "{}");
  auto c = client();
  Json status = {{"apiVersion", "graphcore.ai/v1alpha1"},
                 {"kind", "IPUJob"},
                 {"metadata", {{"name", "j"}}},
                 {"status", {{"phase", "Running"}}}};
  ASSERT_TRUE(c.apply(kIpuJobs, "ml", status, "ipu-operator", true, "status").ok());
  ASSERT_TRUE(c.patch(ResourceRef::pods(), "ml", "p", PatchType::kJson,
                      Json::array({{{"op", "test"}, {"path", "/metadata/uid"}, {"value", "u1"}}}))
                  .ok());
  ASSERT_TRUE(c.remove(ResourceRef::pods(), "ml", "p",
                       DeleteOptions{.propagationPolicy = "Foreground", .preconditionUid = "u1"})
                  .ok());
  auto played = transport_->played();
  EXPECT_EQ(played[0].seen.headers.at("Content-Type"), "application/apply-patch+yaml");
  EXPECT_EQ(played[1].seen.headers.at("Content-Type"), "application/json-patch+json");
  Json deleteBody = Json::parse(played[2].seen.body);
  EXPECT_EQ(deleteBody["propagationPolicy"], "Foreground");
  EXPECT_EQ(deleteBody["preconditions"]["uid"], "u1");

  auto strategic = c.patch(kIpuJobs, "ml", "j", PatchType::kStrategicMerge, Json::object());
  EXPECT_EQ(strategic.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(c.update(kIpuJobs, "ml", Json::object()).error().code, ErrorCode::kInvalidArgument);
}

TEST_F(RestClientTest, InvalidUtf8InAnObjectIsReplacedNotThrown) {
  transport_->expect("POST", "/api/v1/namespaces/ml/configmaps", 201, "{}");
  Json object = {{"metadata", {{"name", "c"}}}, {"data", {{"log", std::string("bad byte \xff here")}}}};
  EXPECT_TRUE(client().create(ResourceRef::configMaps(), "ml", object).ok());
  EXPECT_NE(transport_->played()[0].seen.body.find("bad byte \xef\xbf\xbd here"), std::string::npos);
}

TEST_F(RestClientTest, RotatedTokenFileIsPickedUp) {
  char name[] = "/tmp/ipu-token-XXXXXX";
  int fd = ::mkstemp(name);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::string path = name;
  std::ofstream(path) << "first-token\n";

  transport_->expect("GET", "/api/v1/namespaces/ml/pods/p", 200, "{}")
      .expect("GET", "/api/v1/namespaces/ml/pods/p", 200, "{}")
      .expect("GET", "/api/v1/namespaces/ml/pods/p", 401, statusBody(401, "Unauthorized", "expired"))
      .expect("GET", "/api/v1/namespaces/ml/pods/p", 200, "{}");
  auto c = client(ClusterConfig{.tokenFile = path});
  ASSERT_TRUE(c.get(ResourceRef::pods(), "ml", "p").ok());
  std::ofstream(path) << "second-token-longer\n";  // rotated (the size changes even within one mtime tick)
  ASSERT_TRUE(c.get(ResourceRef::pods(), "ml", "p").ok());
  ASSERT_TRUE(c.get(ResourceRef::pods(), "ml", "p").ok());  // 401, re-read, retried once
  auto played = transport_->played();
  EXPECT_EQ(played[0].seen.headers.at("Authorization"), "Bearer first-token");
  EXPECT_EQ(played[1].seen.headers.at("Authorization"), "Bearer second-token-longer");
  EXPECT_EQ(played[3].seen.headers.at("Authorization"), "Bearer second-token-longer");
  std::filesystem::remove(path);
}

// Watch

const std::string kWatchPath =
    "/api/v1/namespaces/ml/pods?watch=1&resourceVersion=7&allowWatchBookmarks=true&timeoutSeconds=300";

TEST_F(RestClientTest, WatchDeliversEventsSplitAcrossChunks) {
  transport_->expectStream(kWatchPath,
                           {R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"8"}}})"
                            "\n"
                            R"({"type":"MODI)",
                            R"(FIED","object":{"metadata":{"name":"a","resourceVersion":"9"}}})"
                            "\r\n"
                            R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"12"}}})"
                            "\n"});
  std::vector<std::string> seen;
  Status ended =
      client().watch(ResourceRef::pods(), "ml", WatchOptions{.resourceVersion = "7"}, [&](WatchEvent&& e) {
        seen.push_back(e.type + ":" + e.object["metadata"].value("resourceVersion", ""));
        return true;
      });
  ASSERT_TRUE(ended.ok()) << ended.error().toString();
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED:8", "MODIFIED:9", "BOOKMARK:12"}));
}

TEST_F(RestClientTest, WatchErrorsComeBackTyped) {
  transport_
      ->expectStream(
          kWatchPath,
          {R"json({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version: 7 (42)"}})json"
           "\n"})
      .expectStream(kWatchPath, {R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})"
                                 "\n"
                                 R"({"type":"ADDED","obj)"})
      .expectStream(kWatchPath, {"this is not json\n"})
      .expect("GET", kWatchPath, 410, statusBody(410, "Gone", "gone"));
  auto c = client();
  int delivered = 0;
  auto count = [&](WatchEvent&&) { return ++delivered > 0; };
  WatchOptions from7{.resourceVersion = "7"};
  EXPECT_EQ(c.watch(ResourceRef::pods(), "ml", from7, count).error().code, ErrorCode::kGone);
  Status cut = c.watch(ResourceRef::pods(), "ml", from7, count);
  EXPECT_EQ(cut.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(delivered, 1) << "the complete event before the cut is delivered, the partial one is not";
  Status garbage = c.watch(ResourceRef::pods(), "ml", from7, count);
  EXPECT_EQ(garbage.error().code, ErrorCode::kInternal);
  EXPECT_NE(garbage.error().message.find("malformed event"), std::string::npos);
  EXPECT_EQ(c.watch(ResourceRef::pods(), "ml", from7, count).error().code, ErrorCode::kGone);
}

// The watch's decoder on its own: the lines RestClient::watch hands it.
TEST(DecodeWatchLineTest, DecodesEventsSkipsBlankLinesAndTypesErrors) {
  auto added =
      decodeWatchLine(R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"8"}}})", "w");
  ASSERT_TRUE(added.ok()) << added.error().toString();
  ASSERT_TRUE(added->has_value());
  EXPECT_EQ((*added)->type, "ADDED");
  EXPECT_EQ((*added)->object["metadata"]["resourceVersion"], "8");

  auto trimmed = decodeWatchLine(
      R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"8"},"spec":{"big":[1,2,3]}}})",
      "w", {"spec"});
  ASSERT_TRUE(trimmed.ok() && trimmed->has_value());
  EXPECT_FALSE((*trimmed)->object.contains("spec")) << "a field the watcher's cache drops is never built";
  EXPECT_EQ((*trimmed)->object["metadata"]["resourceVersion"], "8");

  auto blank = decodeWatchLine("", "w");
  ASSERT_TRUE(blank.ok());
  EXPECT_FALSE(blank->has_value());

  for (std::string_view malformed :
       {R"(not json)", R"([1,2])", R"({"object":{}})", R"({"type":7,"object":{}})", R"({"type":"ADDED"})"}) {
    auto decoded = decodeWatchLine(malformed, "watch /api/v1/pods");
    ASSERT_FALSE(decoded.ok()) << malformed;
    EXPECT_EQ(decoded.error().code, ErrorCode::kInternal) << malformed;
    EXPECT_EQ(decoded.error().message, "watch /api/v1/pods: malformed event: " + std::string(malformed));
  }

  auto gone = decodeWatchLine(
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old"}})",
      "w");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kGone);
  EXPECT_EQ(gone.error().httpStatus, 410);
  EXPECT_NE(gone.error().message.find("too old"), std::string::npos) << gone.error().message;
}

// Status objects with fields of the wrong type (from something that is not an API server) used to throw
// nlohmann::json exceptions, and a code of 1e300 was converted to int (undefined behaviour). Caught by the
// watch_stream fuzz target (tests/fuzz).
TEST(DecodeWatchLineTest, AStatusWithFieldsOfTheWrongTypeIsStillAnError) {
  auto stringCode =
      decodeWatchLine(R"({"type":"ERROR","object":{"kind":"Status","code":"410","reason":"Expired"}})", "w");
  ASSERT_FALSE(stringCode.ok());
  EXPECT_EQ(stringCode.error().httpStatus, 500) << "a code that is not a number counts as 500";
  EXPECT_EQ(stringCode.error().code, ErrorCode::kGone) << "the reason still says Expired";

  auto hugeCode = decodeWatchLine(R"({"type":"ERROR","object":{"kind":"Status","code":1e300}})", "w");
  ASSERT_FALSE(hugeCode.ok());
  EXPECT_EQ(hugeCode.error().httpStatus, 500);
  EXPECT_EQ(hugeCode.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(decodeWatchLine(R"({"type":"ERROR","object":{"code":7}})", "w").error().httpStatus, 500);

  auto numberKind = decodeWatchLine(R"({"type":"ERROR","object":{"kind":5,"code":410}})", "w");
  ASSERT_FALSE(numberKind.ok());
  EXPECT_EQ(numberKind.error().code, ErrorCode::kGone);

  auto numbers = decodeWatchLine(
      R"({"type":"ERROR","object":{"kind":"Status","code":422,"reason":7,"message":[],"details":{"causes":[{"field":1,"message":"m"}]}}})",
      "w");
  ASSERT_FALSE(numbers.ok());
  EXPECT_EQ(numbers.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(numbers.error().reason, "");
  EXPECT_EQ(numbers.error().message, "w: HTTP 422");
  ASSERT_EQ(numbers.error().causes.size(), 1u);
  EXPECT_EQ(numbers.error().causes[0].field, "");
  EXPECT_EQ(numbers.error().causes[0].message, "m");
}

TEST(LineSplitterTest, SplitsOnNewlinesAcrossChunks) {
  LineSplitter splitter;
  std::vector<std::string> lines;
  auto collect = [&](const StreamLine& line) {
    EXPECT_FALSE(line.cut());
    lines.emplace_back(line.text);
    return true;
  };
  EXPECT_TRUE(splitter.feed("ab", collect));
  EXPECT_TRUE(splitter.hasPartialLine());
  EXPECT_TRUE(splitter.feed("c\n\nd\r\ne", collect));
  EXPECT_EQ(lines, (std::vector<std::string>{"abc", "", "d"}));
  EXPECT_TRUE(splitter.hasPartialLine());
  EXPECT_FALSE(splitter.feed("\nx\ny\n", [&](const StreamLine& line) { return line.text != "x"; }));
}

// A line over the cap is never held whole: its prefix and its length reach the handler, and the lines
// around it are whole.
TEST(LineSplitterTest, ALineOverTheCapArrivesCutWithItsLength) {
  LineSplitter splitter(/*maxLineBytes=*/8);
  std::vector<std::pair<std::string, std::size_t>> lines;
  auto collect = [&](const StreamLine& line) {
    lines.emplace_back(std::string(line.text), line.bytes);
    return true;
  };
  EXPECT_TRUE(splitter.feed("short\n0123", collect));
  EXPECT_TRUE(splitter.feed("456789abc", collect));
  EXPECT_TRUE(splitter.feed("def\r\n12345678\nend\n", collect));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], (std::pair<std::string, std::size_t>{"short", 5}));
  EXPECT_EQ(lines[1].first, "01234567");                                      // the cap's worth, no more
  EXPECT_EQ(lines[1].second, 17u);                                            // "0123456789abcdef\r"
  EXPECT_EQ(lines[2], (std::pair<std::string, std::size_t>{"12345678", 8}));  // at the cap: whole
  EXPECT_EQ(lines[3], (std::pair<std::string, std::size_t>{"end", 3}));
  EXPECT_FALSE(splitter.hasPartialLine());
  EXPECT_TRUE(splitter.feed(std::string(100, 'x'), collect));
  EXPECT_TRUE(splitter.hasPartialLine());
}

// A cut watch event still names its object: type, kind and metadata from its first bytes, nothing else
// kept, whatever follows.
TEST(SkimOversizedEventTest, TheIdentityFromThePrefixOfACutEvent) {
  const std::string line =
      R"({"type":"MODIFIED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w-0",)"
      R"("namespace":"team","uid":"u1","resourceVersion":"42","labels":{"a":"b"},"ownerReferences":[)"
      R"({"apiVersion":"graphcore.ai/v1alpha1","kind":"IPUJob","name":"job","uid":"j1","controller":true,)"
      R"("blockOwnerDeletion":true},{"kind":"Other","name":"x","uid":"o2"}]},"spec":{"containers":[)"
      R"({"name":"c","env":[{"name":"BIG","value":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx)";
  const WatchEvent event = skimOversizedEvent(line, 5'000'000);
  EXPECT_EQ(event.type, "MODIFIED");
  EXPECT_EQ(event.oversizedBytes, 5'000'000u);
  EXPECT_EQ(event.object, Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"w-0",
      "namespace":"team","uid":"u1","resourceVersion":"42","ownerReferences":[
      {"apiVersion":"graphcore.ai/v1alpha1","kind":"IPUJob","name":"job","uid":"j1","controller":true},
      {"kind":"Other","name":"x","uid":"o2"}]}})"));
  // Cut before the owner references: the identity alone; cut anywhere, never a throw.
  const WatchEvent early = skimOversizedEvent(line.substr(0, line.find("\"labels\"")), 1);
  EXPECT_EQ(early.object["metadata"].value("uid", ""), "u1");
  EXPECT_FALSE(early.object["metadata"].contains("ownerReferences"));
  for (std::size_t cut = 0; cut <= line.size(); ++cut) skimOversizedEvent(line.substr(0, cut), 1);
}

}  // namespace
}  // namespace ipu::kube
