#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "pod_map/pod_map_view.h"

namespace ipu::kubectl_ipu {

// The map's view is the operator's (controllers/pod_map/pod_map_view.h): the POD map page draws the same.
using controllers::kExternalMark;
using controllers::kFreeMark;
using controllers::kHiddenJobLabel;
using controllers::kOverflowMark;
using controllers::kUnownedMark;
using controllers::MapHolder;
using controllers::PodMapView;
using controllers::podMapViewOf;
using controllers::VisibleJob;
using controllers::VisibleJobs;
using controllers::visibleJobsOf;

struct MapStyle {
  int width = 80;       // the terminal's columns
  bool color = false;   // ANSI colours (on a TTY only, and never with NO_COLOR)
  Clock::WallTime now;  // for "held 1h02m"
};

// One IPU-POD drawn for a terminal: a header, each ILD as rows of IPU-Machines (a power of two of them per
// row, as many as the width takes, so rows fall on partition boundaries), one character per IPU, a legend of
// the marks, and the totals. Pure: golden-tested (tests/unit/kubectl_ipu/).
std::string renderPodMap(const PodMapView& view, const MapStyle& style);

// "1 IPU", "4 IPUs": the count with the word for it.
std::string plural(std::int64_t count, std::string_view one, std::string_view many);

}  // namespace ipu::kubectl_ipu
