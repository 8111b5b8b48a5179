#include "kube/object_skim.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace ipu::kube {
namespace {

// Keeps the few strings and booleans skimOversizedEvent names, by their path in the event; everything else
// is read past and dropped. A prefix ends in the middle of the JSON: the parse error there ends the pass.
class IdentitySkimmer final : public nlohmann::json_sax<Json> {
 public:
  WatchEvent event;

  bool null() override { return advance(); }
  bool boolean(bool value) override {
    if (auto* owner = ownerReferenceField("controller")) *owner = value;
    return advance();
  }
  bool number_integer(number_integer_t) override { return advance(); }
  bool number_unsigned(number_unsigned_t) override { return advance(); }
  bool number_float(number_float_t, const string_t&) override { return advance(); }
  bool binary(binary_t&) override { return advance(); }
  bool string(string_t& value) override {
    if (at({"type"})) {
      event.type = value;
    } else if (at({"object", "apiVersion"}) || at({"object", "kind"})) {
      event.object[frames_.back().key] = value;
    } else if (isMetadataIdentity()) {
      event.object["metadata"][frames_.back().key] = value;
    } else if (auto* owner = ownerReferenceField(frames_.back().key)) {
      *owner = value;
    }
    return advance();
  }
  bool start_object(std::size_t) override {
    frames_.push_back({});
    return true;
  }
  bool key(string_t& name) override {
    frames_.back().key = name;
    return true;
  }
  bool end_object() override {
    frames_.pop_back();
    return advance();
  }
  bool start_array(std::size_t) override {
    frames_.push_back({.array = true});
    return true;
  }
  bool end_array() override {
    frames_.pop_back();
    return advance();
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  struct Frame {
    bool array = false;
    std::string key;        // the member being read, in an object
    std::size_t index = 0;  // the element being read, in an array
  };

  // After a value: the next element of an enclosing array.
  bool advance() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return true;
  }

  // Whether the value being read is at this path of object keys (no arrays on the way).
  bool at(std::initializer_list<std::string_view> path) const {
    if (frames_.size() != path.size()) return false;
    std::size_t depth = 0;
    for (std::string_view key : path) {
      if (frames_[depth].array || frames_[depth].key != key) return false;
      ++depth;
    }
    return true;
  }

  bool isMetadataIdentity() const {
    if (frames_.size() != 3 || !at({"object", "metadata", frames_.back().key})) return false;
    const std::string& field = frames_.back().key;
    return field == "name" || field == "namespace" || field == "uid" || field == "resourceVersion";
  }

  // The slot for `field` of the owner reference being read, or nullptr when the value is not one.
  Json* ownerReferenceField(const std::string& field) {
    if (frames_.size() != 5 || frames_[0].key != "object" || frames_[1].key != "metadata" ||
        frames_[2].key != "ownerReferences" || !frames_[3].array || frames_[4].array ||
        frames_[4].key != field)
      return nullptr;
    static constexpr std::array<std::string_view, 5> kKept{"apiVersion", "kind", "name", "uid", "controller"};
    if (std::find(kKept.begin(), kKept.end(), field) == kKept.end()) return nullptr;
    Json& owners = event.object["metadata"]["ownerReferences"];
    while (owners.size() <= frames_[3].index) owners.push_back(Json::object());
    return &owners[frames_[3].index][field];
  }

  std::vector<Frame> frames_;
};

}  // namespace

WatchEvent skimOversizedEvent(std::string_view prefix, std::size_t bytes) {
  IdentitySkimmer skimmer;
  skimmer.event.object = Json::object();
  Json::sax_parse(prefix.begin(), prefix.end(), &skimmer, nlohmann::json::input_format_t::json,
                  /*strict=*/false);
  skimmer.event.oversizedBytes = bytes;
  return std::move(skimmer.event);
}

}  // namespace ipu::kube
