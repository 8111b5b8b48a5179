#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "common/clock.h"
#include "kube/rest_client.h"

namespace ipu::kube {

// What a Watcher tells its consumer. A (re)list is framed by Init … InitApply* … InitDone, so a cache can
// build the new picture aside and swap it in whole: no half lists, no ghosts of objects deleted while the
// watch was down.
struct WatcherEvent {
  // kOversized: a watch event too large to hold (WatchEvent::oversizedBytes); `object` is its identity
  // only, the cache keeps what it had.
  enum class Kind { kInit, kInitApply, kInitDone, kApply, kDelete, kOversized };
  Kind kind;
  Json object;            // for kInitApply, kApply, kDelete, kOversized
  std::size_t bytes = 0;  // for kOversized
};

struct WatcherConfig {
  std::string labelSelector;
  std::string fieldSelector;
  // Objects per list page. A page larger than the transport reads (kBodyTooLarge) is asked again at half
  // the size, down to one object, for the rest of that list.
  int64_t pageSize = 500;
  // Fields of every object its cache drops anyway, left out while a list page or a watch event is parsed
  // (ListOptions, WatchOptions); metadata.managedFields always is.
  std::vector<std::string> skipItemFields;
  int watchTimeoutSeconds =
      290;  // jittered by the server; each timeout is a cheap re-watch from the last version
  std::chrono::milliseconds backoffMin{800};
  std::chrono::milliseconds backoffMax{30000};
};

// list + watch as a state machine (kube-rs): Empty → InitPage(continue) → Watching(resourceVersion).
// Bookmarks and events move the resourceVersion; a clean end of a watch re-watches from it; 410 Gone
// (expired version) goes back to Empty and relists; any other failure is reported and retried with
// exponential backoff from the same state. Runs until stopped.
//
// A list reads one page ahead: once a page has arrived, the next is asked for (its continue token is in
// the metadata the server writes first) while this one is parsed and delivered, so the server's work on a
// page and ours on the one before overlap. At most two pages are held at once; a page read ahead for a
// token or size the list no longer asks for is dropped unparsed.
class Watcher {
 public:
  enum class State { kEmpty, kInitPage, kWatching };

  Watcher(RestClient& client, ResourceRef resource, std::string ns, WatcherConfig config = {},
          Clock& clock = Clock::real());

  using Sink = std::function<void(WatcherEvent&&)>;
  using ErrorHandler = std::function<void(const Error&)>;

  void run(std::stop_token stop, const Sink& sink, const ErrorHandler& onError = {});

  // One transition; what run() loops over. Public so tests can drive the machine step by step.
  // Returns the error of a failed step (after which the caller should back off), or ok.
  Status step(std::stop_token stop, const Sink& sink);

  State state() const { return state_; }
  const std::string& resourceVersion() const { return resourceVersion_; }

 private:
  // What lists and watch events leave out as they are parsed: the config's fields and managedFields.
  std::vector<std::string> fieldsNeverParsed() const;
  Status listPage(std::stop_token stop, const Sink& sink);
  // The page at continueToken_ and pageLimit_: the one read ahead when it is that one, else read now.
  Result<std::string> pageText(std::stop_token stop);
  ListOptions listOptions(std::string continueToken) const;
  Status watchFrom(std::stop_token stop, const Sink& sink);

  RestClient& client_;
  ResourceRef resource_;
  std::string namespace_;
  WatcherConfig config_;
  Clock& clock_;
  State state_ = State::kEmpty;
  std::string continueToken_;
  int64_t pageLimit_ = 0;
  std::string resourceVersion_;
  std::string listKind_;
  // The next page, being read on a thread of its own (what it was asked with, to tell whether it is still
  // the page wanted). Last: destroyed first, waiting for the read, while what it uses still exists.
  struct PageAhead {
    std::string continueToken;
    int64_t limit = 0;
    std::future<Result<std::string>> text;
  };
  std::optional<PageAhead> pageAhead_;
};

}  // namespace ipu::kube
