#include "metrics/http_endpoints.h"

// cpprestsdk's U() macro would otherwise clash with GoogleTest's template parameters named U.
#define _TURN_OFF_PLATFORM_STRING
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include <arpa/inet.h>
#include <cpprest/http_client.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "free_port.h"
#include "metrics/scrape_gauges.h"

namespace ipu::metrics {
namespace {

using ::testing::HasSubstr;
using web::http::http_response;
using web::http::method;
using web::http::methods;
using web::http::client::http_client;
using web::http::client::http_client_config;

using ipu::testing::freeLoopbackPort;

// Another process could take a free port before the server does: retry.
std::unique_ptr<HttpEndpoints> startOnFreePort(const Endpoints& endpoints) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto server =
        HttpEndpoints::start(BindAddress{.host = "127.0.0.1", .port = freeLoopbackPort()}, endpoints);
    if (server.ok()) return std::move(server).value();
    EXPECT_EQ(server.error().code, ErrorCode::kUnavailable) << server.error().message;
  }
  ADD_FAILURE() << "no free port after 5 attempts";
  return nullptr;
}

struct Reply {
  int status = 0;
  std::string contentType;
  std::string allow;
  std::string body;
};

Reply request(const std::string& baseUrl, const method& verb, const std::string& pathAndQuery) {
  http_client_config config;
  config.set_timeout(std::chrono::seconds(10));
  http_client client(baseUrl, config);
  http_response response = client.request(verb, pathAndQuery).get();
  Reply reply;
  reply.status = response.status_code();
  reply.contentType = response.headers().content_type();
  if (response.headers().has("Allow")) reply.allow = response.headers()["Allow"];
  reply.body = response.extract_utf8string(/*ignore_content_type=*/true).get();
  return reply;
}

class HttpEndpointsTest : public ::testing::Test {
 protected:
  HttpEndpointsTest() {
    prometheus::BuildCounter()
        .Name("ipu_reconciles_total")
        .Help("Reconciles.")
        .Register(registry_)
        .Add({{"result", "success"}})
        .Increment(3);
    gauges_.add("ipu_jobs", "Jobs by phase.", {"phase"}, [] { return GaugeSamples{{{"Running"}, 2}}; });
    metrics_.add(registry_);
    metrics_.add(gauges_);
    healthz_.add("ping", [] { return Status(); });
    readyz_.add("informers-synced", [this] {
      return synced_ ? Status() : Status(makeError(ErrorCode::kUnavailable, "informers not synced"));
    });
    server_ = startOnFreePort({.metrics = &metrics_, .healthz = &healthz_, .readyz = &readyz_});
  }

  Reply get(const std::string& pathAndQuery) { return request(server_->url(), methods::GET, pathAndQuery); }

  prometheus::Registry registry_;
  ScrapeGauges gauges_;
  Exposition metrics_;
  HealthChecks healthz_{"healthz"};
  HealthChecks readyz_{"readyz"};
  std::atomic<bool> synced_{true};
  std::unique_ptr<HttpEndpoints> server_;  // last: stops before what it serves goes
};

TEST_F(HttpEndpointsTest, MetricsAreServedInTheTextFormat) {
  ASSERT_NE(server_, nullptr);
  const Reply reply = get("/metrics");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.contentType, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(reply.body,
            "# HELP ipu_jobs Jobs by phase.\n"
            "# TYPE ipu_jobs gauge\n"
            "ipu_jobs{phase=\"Running\"} 2\n"
            "# HELP ipu_reconciles_total Reconciles.\n"
            "# TYPE ipu_reconciles_total counter\n"
            "ipu_reconciles_total{result=\"success\"} 3\n");
}

TEST_F(HttpEndpointsTest, ProbesPassAndFailWithTheirChecks) {
  ASSERT_NE(server_, nullptr);
  Reply healthz = get("/healthz");
  EXPECT_EQ(healthz.status, 200);
  EXPECT_EQ(healthz.body, "ok");
  EXPECT_EQ(healthz.contentType, "text/plain; charset=utf-8");
  EXPECT_EQ(get("/readyz").body, "ok");
  EXPECT_EQ(get("/readyz?verbose").body, "[+]informers-synced ok\nreadyz check passed\n");

  synced_ = false;
  const Reply notReady = get("/readyz");
  EXPECT_EQ(notReady.status, 500);
  EXPECT_EQ(notReady.body, "[-]informers-synced failed: informers not synced\nreadyz check failed\n");
  EXPECT_EQ(get("/readyz?verbose=1").status, 500);
  EXPECT_EQ(get("/healthz?verbose").body, "[+]ping ok\nhealthz check passed\n");
}

TEST_F(HttpEndpointsTest, UnknownPathsAre404AndOtherMethods405) {
  ASSERT_NE(server_, nullptr);
  EXPECT_EQ(get("/nope").status, 404);
  EXPECT_EQ(get("/").status, 404);
  EXPECT_EQ(get("/metrics/extra").status, 404);
  // OPTIONS and TRACE included: cpprestsdk would answer those itself if the server did not take them over.
  for (const method& verb : {methods::POST, methods::PUT, methods::DEL, methods::PATCH, methods::OPTIONS,
                             methods::TRCE, methods::HEAD}) {
    const Reply reply = request(server_->url(), verb, "/metrics");
    EXPECT_EQ(reply.status, 405) << verb;
    EXPECT_EQ(reply.allow, "GET") << verb;
    if (verb == methods::HEAD) {
      EXPECT_EQ(reply.body, "") << "a HEAD reply has no body";
    }
  }
}

TEST_F(HttpEndpointsTest, ASecondServerOnTheSamePortIsUnavailable) {
  ASSERT_NE(server_, nullptr);
  const auto second = HttpEndpoints::start(server_->address(), Endpoints{.metrics = &metrics_});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(second.error().message, HasSubstr("cannot listen on 127.0.0.1:"));
  EXPECT_EQ(get("/healthz").status, 200) << "the first server is unaffected";
}

TEST_F(HttpEndpointsTest, TheSamePortUnderAnotherHostNameIsUnavailableToo) {
  ASSERT_NE(server_, nullptr);
  const auto everywhere = HttpEndpoints::start(BindAddress{.port = server_->address().port}, Endpoints{});
  ASSERT_FALSE(everywhere.ok());
  EXPECT_EQ(everywhere.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(get("/healthz").status, 200) << "the first server is unaffected";
}

TEST(HttpEndpointsStartTest, APortHeldByAnotherSocketIsUnavailable) {
  const int holder = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(holder, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(holder, 1), 0);
  ASSERT_EQ(getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length), 0);
  Exposition metrics;
  const auto server = HttpEndpoints::start(BindAddress{.host = "127.0.0.1", .port = ntohs(address.sin_port)},
                                           {.metrics = &metrics});
  close(holder);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(server.error().message, HasSubstr("cannot listen on 127.0.0.1:"));
}

TEST_F(HttpEndpointsTest, DestructionWaitsForARunningCheck) {
  ASSERT_NE(server_, nullptr);
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  readyz_.add("slow", [&entered, released] {
    entered.set_value();
    released.wait();
    return Status();
  });
  std::thread client([url = server_->url()] {
    try {
      (void)request(url, methods::GET, "/readyz");
    } catch (const web::http::http_exception&) {
      // The server may close the connection before the late reply: either way is fine here.
    }
  });
  entered.get_future().wait();
  std::atomic<bool> destroyed{false};
  std::thread destroyer([&] {
    server_.reset();
    destroyed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(destroyed.load()) << "the destructor returned while a check was still running";
  release.set_value();
  destroyer.join();
  client.join();
  EXPECT_TRUE(destroyed.load());
}

TEST_F(HttpEndpointsTest, DestroyingTheServerStopsListening) {
  ASSERT_NE(server_, nullptr);
  const std::string url = server_->url();
  EXPECT_EQ(get("/healthz").status, 200);
  server_.reset();
  EXPECT_THROW(request(url, methods::GET, "/healthz"), web::http::http_exception);
  // The port is free again: a new server can take it.
  auto again = HttpEndpoints::start(*parseBindAddress(url.substr(std::string("http://").size())),
                                    Endpoints{.healthz = &healthz_});
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(request(url, methods::GET, "/healthz").body, "ok");
}

TEST(HttpEndpointsStartTest, DisabledAndIpv6AddressesAreRefused) {
  Exposition metrics;
  const auto disabled = HttpEndpoints::start(BindAddress{.disabled = true}, Endpoints{.metrics = &metrics});
  ASSERT_FALSE(disabled.ok());
  EXPECT_EQ(disabled.error().code, ErrorCode::kInvalidArgument);
  const auto ipv6 = HttpEndpoints::start(*parseBindAddress("[::1]:8081"), Endpoints{.metrics = &metrics});
  ASSERT_FALSE(ipv6.ok());
  EXPECT_EQ(ipv6.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(ipv6.error().message, HasSubstr("does not support IPv6"));
}

}  // namespace
}  // namespace ipu::metrics
