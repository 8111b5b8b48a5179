// The watch stream (operator/kube): the input is the body of a watch response. The first byte picks the size
// of the chunks it arrives in; the rest goes through LineSplitter and decodeWatchLine, and then through the
// whole path a watch takes: a Watcher lists (empty) and watches over a RestClient whose transport plays the
// body in those chunks.
// Checks: nothing throws; the lines are the same however the body is chunked, and a partial last line is
// reported; a line is refused only as a malformed event (kInternal) or as the Error an ERROR event carries;
// the Watcher emits exactly the decoded ADDED/MODIFIED (Apply) and DELETED (Delete) events, in order and with
// the same objects, up to the first refused line; its watch step fails with that line's error, or Unavailable
// for a cut stream, and otherwise ends well; its resourceVersion is the last one an event carried.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_transport.h"
#include "fuzz_check.h"
#include "kube/rest_client.h"
#include "kube/transport.h"
#include "kube/watcher.h"
#include "skipping_clock.h"

namespace {

using namespace ipu;
using namespace ipu::kube;

const std::string kListPath = "/api/v1/namespaces/ml/pods?limit=500";
const std::string kWatchPath =
    "/api/v1/namespaces/ml/pods?watch=1&resourceVersion=1&allowWatchBookmarks=true&timeoutSeconds=290";
const std::string kWhat = "watch /api/v1/namespaces/ml/pods";

std::vector<std::string> chunksOf(const std::string& body, std::size_t size) {
  std::vector<std::string> chunks;
  for (std::size_t at = 0; at < body.size(); at += size) chunks.push_back(body.substr(at, size));
  return chunks;
}

// The body's lines by the definition (split at '\n', one trailing '\r' dropped), and what is left after the
// last '\n'.
std::vector<std::string> linesOf(const std::string& body, std::string* rest) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t newline; (newline = body.find('\n', start)) != std::string::npos; start = newline + 1) {
    std::string line = body.substr(start, newline - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  *rest = body.substr(start);
  return lines;
}

// What the watch should make of the body.
struct Expected {
  std::vector<WatcherEvent> emitted;  // Apply and Delete, in order
  std::optional<ErrorCode> failure;   // the watch step's error
  std::string resourceVersion = "1";
};

std::string versionOf(const Json& object) {
  if (!object.is_object()) return "";
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  auto version = metadata->find("resourceVersion");
  return version != metadata->end() && version->is_string() ? version->get<std::string>() : "";
}

Expected expectedOf(const std::vector<std::string>& lines, const std::string& rest) {
  Expected expected;
  for (const std::string& line : lines) {
    auto decoded = decodeWatchLine(line, kWhat);
    if (!decoded) {
      const Error& error = decoded.error();
      if (error.message.find(kWhat + ": malformed event: ") == 0) {
        FUZZ_CHECK(error.code == ErrorCode::kInternal);
      } else {
        // An ERROR event: the error a failed request with that Status would give.
        FUZZ_CHECK(error.message.find(kWhat + ": HTTP ") == 0);
      }
      expected.failure = error.code;
      return expected;
    }
    if (!*decoded) {
      FUZZ_CHECK(line.empty());
      continue;
    }
    const WatchEvent& event = **decoded;
    FUZZ_CHECK(event.type != "ERROR");
    if (event.type == "ADDED" || event.type == "MODIFIED")
      expected.emitted.push_back({WatcherEvent::Kind::kApply, event.object});
    else if (event.type == "DELETED")
      expected.emitted.push_back({WatcherEvent::Kind::kDelete, event.object});
    if (std::string version = versionOf(event.object); !version.empty()) expected.resourceVersion = version;
  }
  if (!rest.empty()) expected.failure = ErrorCode::kUnavailable;
  return expected;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunkSize = 1 + data[0] % 64;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::vector<std::string> chunks = chunksOf(body, chunkSize);

  // The splitter, against the definition and against itself fed all at once.
  std::string rest;
  const std::vector<std::string> lines = linesOf(body, &rest);
  for (const auto& feeding : {chunks, std::vector<std::string>{body}}) {
    LineSplitter splitter;
    std::vector<std::string> split;
    for (const std::string& chunk : feeding) {
      FUZZ_CHECK(splitter.feed(chunk, [&](const StreamLine& line) {
        split.emplace_back(line.text);
        return true;
      }));
    }
    FUZZ_CHECK(split == lines);
    FUZZ_CHECK(splitter.hasPartialLine() == !rest.empty());
  }

  // The whole path: list (empty), then watch the body.
  const Expected expected = expectedOf(lines, rest);
  auto transport = std::make_shared<testing::FakeTransport>();
  transport
      ->expect("GET", kListPath, 200,
               R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"}})")
      .expectStream(kWatchPath, chunks);
  testing::SkippingClock clock;
  RestClient client(transport, ClusterConfig{}, ClientOptions{}, clock);
  Watcher watcher(client, ResourceRef::pods(), "ml", WatcherConfig{}, clock);
  std::vector<WatcherEvent> emitted;
  auto sink = [&](WatcherEvent&& event) { emitted.push_back(std::move(event)); };
  FUZZ_CHECK(watcher.step({}, sink).ok());  // Init
  FUZZ_CHECK(watcher.step({}, sink).ok());  // the list, InitDone
  FUZZ_CHECK(emitted.size() == 2 && watcher.state() == Watcher::State::kWatching);
  emitted.clear();
  Status watched = watcher.step({}, sink);

  FUZZ_CHECK(transport->unexpected().empty() && transport->remaining() == 0);
  FUZZ_CHECK(watched.ok() == !expected.failure);
  if (expected.failure) FUZZ_CHECK(watched.error().code == *expected.failure);
  FUZZ_CHECK(emitted.size() == expected.emitted.size());
  for (std::size_t i = 0; i < emitted.size(); ++i) {
    FUZZ_CHECK(emitted[i].kind == expected.emitted[i].kind);
    FUZZ_CHECK(emitted[i].object == expected.emitted[i].object);
  }
  FUZZ_CHECK(watcher.resourceVersion() == expected.resourceVersion);
  // 410 Gone sends the watcher back to relist; anything else keeps it watching.
  const bool gone = expected.failure == ErrorCode::kGone;
  FUZZ_CHECK(watcher.state() == (gone ? Watcher::State::kEmpty : Watcher::State::kWatching));
  return 0;
}
