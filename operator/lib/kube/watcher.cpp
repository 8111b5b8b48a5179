#include "kube/watcher.h"

#include <algorithm>
#include <utility>

#include "common/log.h"
#include "kube/list_parse.h"

namespace ipu::kube {
namespace {

// A watcher configured to list all at once (pageSize 0) whose reply was too large pages from here.
constexpr int64_t kUnpaginatedFallbackPage = 256;

// "" when the object carries none (or, from a misbehaving server, one that is not a string).
std::string resourceVersionOf(const Json& object) {
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  auto version = metadata->find("resourceVersion");
  return version != metadata->end() && version->is_string() ? version->get<std::string>() : "";
}

}  // namespace

Watcher::Watcher(RestClient& client, ResourceRef resource, std::string ns, WatcherConfig config, Clock& clock)
    : client_(client),
      resource_(std::move(resource)),
      namespace_(std::move(ns)),
      config_(std::move(config)),
      clock_(clock) {}

void Watcher::run(std::stop_token stop, const Sink& sink, const ErrorHandler& onError) {
  auto backoff = config_.backoffMin;
  while (!stop.stop_requested()) {
    Status done = step(stop, sink);
    if (done) {
      backoff = config_.backoffMin;
      continue;
    }
    if (done.error().code == ErrorCode::kCancelled) return;
    if (onError) onError(done.error());
    if (done.error().code == ErrorCode::kGone) continue;  // the state is already Empty: relist at once
    if (!clock_.sleepFor(backoff, stop)) return;
    backoff = std::min(backoff * 2, config_.backoffMax);
  }
}

Status Watcher::step(std::stop_token stop, const Sink& sink) {
  switch (state_) {
    case State::kEmpty:
      sink(WatcherEvent{WatcherEvent::Kind::kInit, {}});
      continueToken_.clear();
      pageLimit_ = config_.pageSize;
      state_ = State::kInitPage;
      return {};
    case State::kInitPage:
      return listPage(stop, sink);
    case State::kWatching:
      return watchFrom(stop, sink);
  }
  return {};
}

std::vector<std::string> Watcher::fieldsNeverParsed() const {
  std::vector<std::string> fields = config_.skipItemFields;
  // Every informer strips it (stripBookkeeping): often the larger part of an object.
  fields.push_back("metadata.managedFields");
  return fields;
}

ListOptions Watcher::listOptions(std::string continueToken) const {
  return {config_.labelSelector, config_.fieldSelector, pageLimit_, std::move(continueToken), "",
          fieldsNeverParsed()};
}

Result<std::string> Watcher::pageText(std::stop_token stop) {
  std::optional<PageAhead> ahead = std::exchange(pageAhead_, std::nullopt);
  if (ahead && ahead->continueToken == continueToken_ && ahead->limit == pageLimit_) return ahead->text.get();
  if (ahead) ahead->text.wait();  // not the page wanted any more (a relist, a smaller page): dropped
  return client_.listText(resource_, namespace_, listOptions(continueToken_), stop);
}

Status Watcher::listPage(std::stop_token stop, const Sink& sink) {
  auto text = pageText(stop);
  if (!text) {
    // Objects larger than a page's share of what the transport holds: ask for fewer (the same continue
    // token), until one object a page. A single object larger than that is an error, retried with backoff.
    if (text.error().reason == kBodyTooLarge && pageLimit_ != 1) {
      pageLimit_ = pageLimit_ > 1 ? pageLimit_ / 2 : kUnpaginatedFallbackPage;
      log::info("a list page was larger than the operator reads: asking for fewer objects a page",
                {{"resource", resource_.path(namespace_)}, {"limit", std::to_string(pageLimit_)}});
      return {};
    }
    // The continue token expired between pages: the list must start over.
    if (text.error().code == ErrorCode::kGone) state_ = State::kEmpty;
    return text.error();
  }
  if (auto next = continueTokenAhead(*text); next && !next->empty()) {
    pageAhead_ = PageAhead{*next, pageLimit_,
                           std::async(std::launch::async, [this, options = listOptions(*next), stop] {
                             return client_.listText(resource_, namespace_, options, stop);
                           })};
  }
  auto page = RestClient::parseListText(*text, "list " + resource_.path(namespace_), fieldsNeverParsed());
  if (!page) return page.error();
  // List items come without kind/apiVersion; give them the ones a watch event would carry.
  std::string kind = page->value("kind", "");
  if (kind.size() > 4 && kind.ends_with("List")) kind.resize(kind.size() - 4);
  std::string apiVersion = page->value("apiVersion", resource_.apiVersion());
  if (auto items = page->find("items"); items != page->end() && items->is_array()) {
    for (auto& item : *items) {
      if (!item.is_object()) continue;
      if (!item.contains("kind") && !kind.empty()) item["kind"] = kind;
      if (!item.contains("apiVersion")) item["apiVersion"] = apiVersion;
      sink(WatcherEvent{WatcherEvent::Kind::kInitApply, std::move(item)});
    }
  }
  const Json& metadata = (*page)["metadata"];
  continueToken_ = metadata.is_object() ? metadata.value("continue", "") : "";
  if (continueToken_.empty()) {
    resourceVersion_ = metadata.is_object() ? metadata.value("resourceVersion", "") : "";
    sink(WatcherEvent{WatcherEvent::Kind::kInitDone, {}});
    state_ = State::kWatching;
  }
  return {};
}

Status Watcher::watchFrom(std::stop_token stop, const Sink& sink) {
  const WatchOptions options{
      config_.labelSelector, config_.fieldSelector, resourceVersion_, config_.watchTimeoutSeconds, true,
      fieldsNeverParsed()};
  Status ended = client_.watch(
      resource_, namespace_, options,
      [&](WatchEvent&& event) {
        std::string version = resourceVersionOf(event.object);
        if (event.oversizedBytes > 0) {
          sink(WatcherEvent{WatcherEvent::Kind::kOversized, std::move(event.object), event.oversizedBytes});
        } else if (event.type == "ADDED" || event.type == "MODIFIED") {
          sink(WatcherEvent{WatcherEvent::Kind::kApply, std::move(event.object)});
        } else if (event.type == "DELETED") {
          sink(WatcherEvent{WatcherEvent::Kind::kDelete, std::move(event.object)});
        }
        // BOOKMARK only moves the version.
        if (!version.empty()) resourceVersion_ = version;
        return !stop.stop_requested();
      },
      stop);
  if (!ended && ended.error().code == ErrorCode::kGone) {
    state_ = State::kEmpty;  // our version is older than etcd keeps: relist
  }
  return ended;
}

}  // namespace ipu::kube
