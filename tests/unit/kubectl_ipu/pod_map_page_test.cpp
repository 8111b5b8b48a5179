// The POD map page the operator serves: the same IPU-POD as `kubectl ipu status` draws, as an SVG whose every
// IPU is one cell in its holder's colour, with the plugin's rule for other namespaces' names; and the
// server's answers that need no API server (the token reviews are tested against a real one:
// tests/integration/operator/pod_map_page_test.cpp).
#include "pod_map/pod_map_page.h"

#include <map>
#include <regex>

#include <gtest/gtest.h>

#include "common/time_format.h"
#include "fake_clock.h"
#include "fake_transport.h"
#include "pod_map/pod_map_page_server.h"
#include "pod_map_fixtures.h"

namespace ipu::controllers {
namespace {

using testing::PodBuilder;

const Clock::WallTime kNow = *parseTime("2026-11-28T10:02:30Z");

PodBuilder twoTeams() {
  PodBuilder pod(1, 64);
  pod.job("team-a", "bert", {{0, 16}}, "2026-11-28T09:00:00Z")
      .job("team-b", "resnet", {{16, 8}, {24, 8}})
      .job("team-a", "gpt", {{32, 4}})
      .partition("someone-elses", 48, 2);
  return pod;
}

PageSnapshot snapshotOf(const PodBuilder& pod, QuotaReport quotas = {}) {
  PageSnapshot snapshot{.at = kNow, .pods = {pod.status()}, .quotas = std::move(quotas)};
  for (const auto& job : pod.jobs()) {
    const auto& metadata = (*job)["metadata"];
    snapshot.jobs[metadata["uid"]] = {metadata["namespace"], metadata["name"]};
  }
  return snapshot;
}

const PageViewer kTeamA{.name = "system:serviceaccount:team-a:alice", .namespaces = {"team-a"}};

struct Cell {
  std::string fill;
  std::string title;
};

// Every IPU cell of the page's SVGs, by the IPU's global id.
std::map<int, Cell> cellsOf(const std::string& page) {
  std::map<int, Cell> cells;
  const std::regex cell(
      R"re(<rect class="ipu" data-ipu="(\d+)"[^>]* fill="([^"]+)"><title>([^<]*)</title>)re");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), cell); it != std::sregex_iterator(); ++it) {
    const int ipu = std::stoi((*it)[1]);
    EXPECT_FALSE(cells.contains(ipu)) << "IPU " << ipu << " drawn twice";
    cells[ipu] = {(*it)[2], (*it)[3]};
  }
  return cells;
}

TEST(PodMapPageTest, EveryIpuIsOneCellInItsHoldersColourAndNamesOnlyWhatTheViewerMayList) {
  const PodBuilder pod = twoTeams();
  const PageModel model = pageModelOf(snapshotOf(pod), kTeamA);
  const std::string page = renderPodMapPage(model, 5);
  const std::map<int, Cell> cells = cellsOf(page);
  ASSERT_EQ(cells.size(), 64u);

  // The legend's colour of each holder, read from the page as a browser would.
  std::map<std::string, std::string> colourOf;  // label -> colour
  const std::regex row(
      R"re(<tr class="holder" data-holder="\d+" data-colour="([^"]+)">.*?<td>([^<]*)</td>)re");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), row); it != std::sregex_iterator(); ++it)
    colourOf[(*it)[2]] = (*it)[1];
  ASSERT_EQ(colourOf.size(), 4u) << page;
  EXPECT_EQ(colourOf.count("team-a/bert"), 1u);
  EXPECT_EQ(colourOf.count("team-a/gpt"), 1u);
  EXPECT_EQ(colourOf.count("another namespace"), 1u);
  EXPECT_EQ(colourOf.count("outside ipu-operator"), 1u);
  std::set<std::string> distinct;
  for (const auto& [label, colour] : colourOf) distinct.insert(colour);
  EXPECT_EQ(distinct.size(), 4u) << "two holders share a colour";

  for (const auto& [ipu, cell] : cells) {
    std::string holder = "free";
    if (ipu < 16)
      holder = "team-a/bert";
    else if (ipu < 32)
      holder = "another namespace";
    else if (ipu < 36)
      holder = "team-a/gpt";
    else if (ipu == 48 || ipu == 49)
      holder = "outside ipu-operator";
    const std::string expected = holder == "free" ? kFreeColour : colourOf[holder];
    EXPECT_EQ(cell.fill, expected) << "IPU " << ipu;
    EXPECT_NE(cell.title.find(holder), std::string::npos) << "IPU " << ipu << ": " << cell.title;
  }
  EXPECT_NE(cells.at(3).title.find("16 IPUs, held 1h02m"), std::string::npos) << cells.at(3).title;
  EXPECT_EQ(page.find("team-b"), std::string::npos) << "another namespace's name is on the page";
  EXPECT_EQ(page.find("resnet"), std::string::npos) << "another namespace's job is named on the page";
  EXPECT_NE(page.find("<meta http-equiv=\"refresh\" content=\"5\">"), std::string::npos);
  // Nothing is loaded from elsewhere and nothing runs.
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("href="), std::string::npos);
}

TEST(PodMapPageTest, AViewerOfEveryNamespaceSeesEveryName) {
  const std::string page = renderPodMapPage(pageModelOf(snapshotOf(twoTeams()), {.allNamespaces = true}), 0);
  EXPECT_NE(page.find("team-b/resnet"), std::string::npos);
  EXPECT_EQ(page.find(kHiddenJobLabel), std::string::npos);
  EXPECT_EQ(page.find("http-equiv=\"refresh\""), std::string::npos);
}

TEST(PodMapPageTest, QueueAndQuotasOfOtherNamespacesAreCountedNotShown) {
  QuotaReport quotas;
  quotas.quotas = {{.ns = "team-a", .quota = "ipus", .usedIpus = 20, .maxIpus = 32, .admittedJobs = 2},
                   {.ns = "team-b", .quota = "secret-quota", .usedIpus = 16, .maxIpus = 16}};
  quotas.waiting = {{.ns = "team-b",
                     .job = "big",
                     .ipus = 64,
                     .position = 1,
                     .reason = "InsufficientCapacity",
                     .message = "waits behind quota secret-quota"},
                    {.ns = "team-a",
                     .job = "next",
                     .ipus = 8,
                     .position = 2,
                     .reason = "WaitingInQueue",
                     .message = "position 2 <of 2>"}};
  const std::string page = renderPodMapPage(pageModelOf(snapshotOf(twoTeams(), quotas), kTeamA), 5);
  EXPECT_EQ(page.find("secret-quota"), std::string::npos);
  EXPECT_EQ(page.find("big"), std::string::npos);
  EXPECT_NE(
      page.find("<td>1</td><td>another namespace</td><td>64</td><td>InsufficientCapacity</td><td></td>"),
      std::string::npos)
      << page;
  // Text is escaped: a message is whatever the operator wrote, and HTML only as text.
  EXPECT_NE(page.find("<td>2</td><td>team-a/next</td><td>8</td><td>WaitingInQueue</td><td>position 2 &lt;of "
                      "2&gt;</td>"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("<td>team-a</td><td>ipus</td><td>20 / 32</td>"), std::string::npos) << page;
  EXPECT_NE(page.find("1 IPUQuota of namespaces whose IPUJobs you may not list is not shown"),
            std::string::npos);
}

TEST(PodMapPageTest, AControllerNeverReadSaysSo) {
  api::IpuPodStatus status{.controller = "vipu-b"};
  const std::string page =
      renderPodMapPage(pageModelOf(PageSnapshot{.at = kNow, .pods = {status}}, {.allNamespaces = true}), 5);
  EXPECT_NE(page.find("has not read this controller's topology yet"), std::string::npos);
  EXPECT_EQ(page.find("<svg"), std::string::npos);
}

class PodMapPageServerTest : public ::testing::Test {
 protected:
  // A client whose every request fails: these answers must not need the API server.
  std::shared_ptr<ipu::testing::FakeTransport> transport_ = std::make_shared<ipu::testing::FakeTransport>();
  kube::RestClient client_{transport_, kube::ClusterConfig{}, kube::ClientOptions{.maxRetries = 0}};

  static PodMapPageServer::SnapshotSource source(const PodBuilder& pod) {
    return [snapshot = snapshotOf(pod)](Clock::WallTime) { return std::optional(snapshot); };
  }
};

bool hasHeader(const metrics::HttpReply& reply, const std::string& name) {
  return std::any_of(reply.headers.begin(), reply.headers.end(),
                     [&](const auto& header) { return header.first == name; });
}

TEST_F(PodMapPageServerTest, OnLoopbackAStandbyServesWhatTheApiServerSaysAndTheLeaderItsCaches) {
  // A standby: the IPUPods as published, the jobs and the quotas, read once for a few seconds of viewers.
  const PodBuilder pod = twoTeams();
  nlohmann::json jobs{{"metadata", nlohmann::json::object()}, {"items", nlohmann::json::array()}};
  for (const auto& job : pod.jobs()) jobs["items"].push_back(*job);
  transport_
      ->expect("GET", "/apis/graphcore.ai/v1alpha1/ipupods", 200,
               nlohmann::json{{"metadata", nlohmann::json::object()},
                              {"items", {{{"status", api::toJson(pod.status())}}}}}
                   .dump())
      .expect("GET", "/apis/graphcore.ai/v1alpha1/ipujobs", 200, jobs.dump())
      .expect("GET", "/apis/graphcore.ai/v1alpha1/ipuquotas", 200, R"({"metadata":{},"items":[]})")
      .expectFailure("GET", "/apis/graphcore.ai/v1alpha1/ipupods",
                     makeError(ErrorCode::kUnavailable, "down"));
  ipu::testing::FakeClock clock;
  PodMapPageServer server(client_, {.address = *metrics::parseBindAddress("127.0.0.1:8090")}, clock);
  const metrics::HttpRequest get{.method = "GET", .path = "/"};
  for (int view = 0; view < 2; ++view) {
    const auto reply = server.handle(get);
    ASSERT_EQ(reply.status, 200) << reply.body;
    EXPECT_NE(reply.body.find("team-b/resnet"), std::string::npos) << "loopback shows every name";
  }
  clock.advance(PodMapPageServer::kStandbySnapshotLifetime);
  const auto unreadable = server.handle(get);
  EXPECT_EQ(unreadable.status, 503);
  EXPECT_NE(unreadable.body.find("could not read the cluster"), std::string::npos);
  EXPECT_TRUE(transport_->unexpected().empty());
  EXPECT_EQ(transport_->remaining(), 0u);

  // The leader: its caches, and nothing asked of the API server.
  server.attach(source(pod));
  const auto reply = server.handle(get);
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.contentType, "text/html; charset=utf-8");
  EXPECT_TRUE(hasHeader(reply, "Content-Security-Policy"));
  EXPECT_EQ(server.handle({.method = "POST", .path = "/"}).status, 405);
  EXPECT_EQ(server.handle({.method = "GET", .path = "/metrics"}).status, 404);
  EXPECT_EQ(server.handle({.method = "GET", .path = "/", .query = "namespace=../x"}).status, 400);
  EXPECT_EQ(transport_->played().size(), 4u);
  EXPECT_TRUE(transport_->unexpected().empty());
}

TEST_F(PodMapPageServerTest, BoundWiderARequestWithoutATokenIsRefusedBeforeAnythingIsRead) {
  EXPECT_FALSE(PodMapPageServer::needsToken(*metrics::parseBindAddress("localhost:8090")));
  EXPECT_TRUE(PodMapPageServer::needsToken(*metrics::parseBindAddress(":8090")));
  EXPECT_TRUE(PodMapPageServer::needsToken(*metrics::parseBindAddress("10.0.0.7:8090")));
  PodMapPageServer server(client_, {.address = *metrics::parseBindAddress(":8090")});
  bool read = false;
  server.attach([&read](Clock::WallTime) -> std::optional<PageSnapshot> {
    read = true;
    return PageSnapshot{};
  });
  const auto reply = server.handle({.method = "GET", .path = "/"});
  EXPECT_EQ(reply.status, 401);
  EXPECT_TRUE(hasHeader(reply, "WWW-Authenticate"));
  EXPECT_FALSE(read);
  EXPECT_EQ(server.handle({.method = "GET", .path = "/", .authorization = "Basic YTpi"}).status, 401);
}

TEST_F(PodMapPageServerTest, BoundWiderTheTokensUserSeesTheNamespacesItMayListAndIsAskedOnlyOnceInAWhile) {
  const std::string tokenReviews = "/apis/authentication.k8s.io/v1/tokenreviews";
  const std::string accessReviews = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
  transport_
      ->expect(
          "POST", tokenReviews, 201,
          R"({"status":{"authenticated":true,"user":{"username":"alice","uid":"u-1","groups":["devs"]}}})")
      .expect("POST", accessReviews, 201, R"({"status":{"allowed":false}})")  // cluster-wide
      .expect("POST", accessReviews, 201, R"({"status":{"allowed":true}})")   // team-a
      .expect("POST", accessReviews, 201, R"({"status":{"allowed":false}})")  // team-b
      .expect("POST", tokenReviews, 201, R"({"status":{"authenticated":false,"error":"expired"}})");
  PodMapPageServer server(client_, {.address = *metrics::parseBindAddress(":8090")});
  server.attach(source(twoTeams()));
  const metrics::HttpRequest alice{.method = "GET", .path = "/", .authorization = "Bearer alices-token"};
  for (int view = 0; view < 3; ++view) {  // a refreshing page: reviewed once
    const auto reply = server.handle(alice);
    ASSERT_EQ(reply.status, 200) << reply.body;
    EXPECT_NE(reply.body.find("team-a/bert"), std::string::npos);
    EXPECT_EQ(reply.body.find("team-b"), std::string::npos);
    EXPECT_NE(reply.body.find("shown to alice"), std::string::npos);
  }
  const auto played = transport_->played();
  ASSERT_EQ(played.size(), 4u);
  const auto sent = nlohmann::json::parse(played[2].seen.body);
  EXPECT_EQ(sent["spec"]["user"], "alice");
  EXPECT_EQ(sent["spec"]["groups"], nlohmann::json::array({"devs"}));
  EXPECT_EQ(
      sent["spec"]["resourceAttributes"],
      (nlohmann::json{
          {"group", "graphcore.ai"}, {"resource", "ipujobs"}, {"verb", "list"}, {"namespace", "team-a"}}));
  EXPECT_EQ(server.handle({.method = "GET", .path = "/", .authorization = "Bearer stale"}).status, 401);
  EXPECT_TRUE(transport_->unexpected().empty()) << transport_->unexpected().front();
  EXPECT_EQ(transport_->remaining(), 0u);
}

}  // namespace
}  // namespace ipu::controllers
