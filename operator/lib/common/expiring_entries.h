#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>

namespace ipu {

// A map of entries that normally end when their object comes back (an event seen, a state settled), and
// expire when it never does (deleted meanwhile). Erases the expired ones, but only once the map has doubled
// since the last time: a map that keeps a steady size is never walked, one that grows is walked a
// logarithmic number of times. The owner's lock must be held.
class ExpiringEntries {
 public:
  template <class Map, class Expired>
  void prune(Map& map, Expired expired) {
    if (map.size() < pruneAbove_) return;
    for (auto it = map.begin(); it != map.end();) it = expired(*it) ? map.erase(it) : std::next(it);
    pruneAbove_ = std::max(kFloor, 2 * map.size());
  }

 private:
  static constexpr std::size_t kFloor = 64;
  std::size_t pruneAbove_ = kFloor;
};

}  // namespace ipu
