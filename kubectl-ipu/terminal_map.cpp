#include "kubectl-ipu/terminal_map.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "common/time_format.h"

namespace ipu::kubectl_ipu {
namespace {

constexpr int kRowPrefix = 12;  // "ILD 0  M0   "

// A holder's colour: jobs cycle through six, the operator's unowned partitions yellow, external ones grey.
std::string colourOf(const PodMapView& view, int holder) {
  if (holder < 0) return "\x1b[2m";  // free: dim
  const MapHolder& h = view.holders[static_cast<std::size_t>(holder)];
  if (h.kind == api::kHolderUnowned) return "\x1b[33m";
  if (h.kind == api::kHolderExternal) return "\x1b[90m";
  static constexpr const char* kJobColours[] = {"\x1b[1;36m", "\x1b[1;32m", "\x1b[1;35m",
                                                "\x1b[1;34m", "\x1b[1;31m", "\x1b[1;33m"};
  int jobIndex = 0;
  for (int i = 0; i < holder; ++i) {
    if (view.holders[static_cast<std::size_t>(i)].kind == api::kHolderJob) ++jobIndex;
  }
  return kJobColours[jobIndex % 6];
}
constexpr const char* kReset = "\x1b[0m";

char markOf(const PodMapView& view, int holder) {
  return holder < 0 ? kFreeMark : view.holders[static_cast<std::size_t>(holder)].mark;
}

// The columns of a row of k IPU-Machines: 4 characters each, one space between, one more between groups of
// four.
int rowWidth(int machines, int ipusPerMachine) {
  const int groups = machines >= 4 ? machines / 4 : 1;
  return kRowPrefix + machines * (ipusPerMachine + 1) - 1 + (groups - 1);
}

int machinesPerRow(int machinesPerIld, int ipusPerMachine, int width) {
  int machines = 1;
  while (machines * 2 <= machinesPerIld && rowWidth(machines * 2, ipusPerMachine) <= width) machines *= 2;
  return machines;
}

std::string padded(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string fitted(const std::string& text, std::size_t width) {
  if (text.size() <= width || width < 4) return text;
  return text.substr(0, width - 3) + "...";
}

void drawIlds(std::ostringstream& out, const PodMapView& view, const MapStyle& style) {
  const api::IpuPodStatus& status = view.status;
  const int perMachine = status.ipusPerMachine > 0 ? status.ipusPerMachine : 4;
  const int machinesPerIld = std::max(1, status.ildSize / perMachine);
  const int perRow = machinesPerRow(machinesPerIld, perMachine, style.width);
  for (int ild = 0; ild < status.ilds; ++ild) {
    for (int firstMachine = 0; firstMachine < machinesPerIld; firstMachine += perRow) {
      char prefix[32];
      std::snprintf(prefix, sizeof prefix, "%-7s",
                    firstMachine == 0 ? ("ILD " + std::to_string(ild)).c_str() : "");
      out << prefix << padded("M" + std::to_string(firstMachine), 5);
      int open = -2;  // the holder whose colour is on; -2: none
      for (int machine = firstMachine; machine < firstMachine + perRow && machine < machinesPerIld;
           ++machine) {
        if (machine > firstMachine) out << (machine % 4 == 0 ? "  " : " ");
        for (int k = 0; k < perMachine; ++k) {
          const std::size_t ipu = static_cast<std::size_t>(ild * status.ildSize + machine * perMachine + k);
          const int holder = ipu < view.holderOfIpu.size() ? view.holderOfIpu[ipu] : -1;
          if (style.color && holder != open) {
            out << colourOf(view, holder);
            open = holder;
          }
          out << markOf(view, holder);
        }
        if (style.color) {
          out << kReset;
          open = -2;
        }
      }
      out << '\n';
    }
  }
}

// One line per mark: the mark, what it stands for, its IPUs and for how long it has held them; the label is
// cut to what the width leaves.
void drawLegend(std::ostringstream& out, const PodMapView& view, const MapStyle& style) {
  constexpr int kAfterLabel = 2 + 5 + 2 + 6;  // "  IPUS  HELD  " columns
  std::size_t labelWidth = 4;                 // "free"
  for (const MapHolder& holder : view.holders) labelWidth = std::max(labelWidth, holder.label.size());
  labelWidth = std::min<std::size_t>(labelWidth,
                                     static_cast<std::size_t>(std::max(12, style.width - 5 - kAfterLabel)));
  auto line = [&](int holder, const std::string& label, int ipus, const std::string& held) {
    out << "  ";
    if (style.color) out << colourOf(view, holder);
    out << markOf(view, holder);
    if (style.color) out << kReset;
    char count[16];
    std::snprintf(count, sizeof count, "%5d", ipus);
    std::string text = "  " + padded(fitted(label, labelWidth), labelWidth) + "  " + count;
    if (!held.empty()) text += "  " + held;
    out << text << '\n';
  };
  out << padded("", 5) << padded("HOLDER", labelWidth) << "   IPUS  HELD\n";
  for (std::size_t i = 0; i < view.holders.size(); ++i) {
    const MapHolder& holder = view.holders[i];
    line(static_cast<int>(i), holder.label, holder.ipuCount,
         holder.since ? formatElapsed(style.now - *holder.since) : "");
  }
  line(-1, "free", view.status.freeIpus, "");
}

}  // namespace

std::string plural(std::int64_t count, std::string_view one, std::string_view many) {
  return std::to_string(count) + " " + std::string(count == 1 ? one : many);
}

std::string renderPodMap(const PodMapView& view, const MapStyle& style) {
  const api::IpuPodStatus& status = view.status;
  std::ostringstream out;
  out << status.controller;
  if (status.ilds <= 0) {
    out << ": topology not read yet";
    if (!status.readError.empty()) out << " (" << status.readError << ")";
    out << '\n';
    return out.str();
  }
  const std::string shape =
      plural(status.ilds, "ILD", "ILDs") + " x " + std::to_string(status.ildSize) + " IPUs";
  const std::string cluster = "(cluster " + status.cluster + ")";
  const bool oneLine = status.controller.size() + 2 + shape.size() + 1 + cluster.size() <=
                       static_cast<std::size_t>(style.width);
  out << ": " << shape << (oneLine ? " " : "\n") << cluster << '\n';
  drawIlds(out, view, style);
  drawLegend(out, view, style);
  out << "free " << status.freeIpus << " of " << status.totalIpus << " IPUs\n"
      << "largest free aligned block: " << plural(status.largestFreeBlock, "IPU", "IPUs") << '\n';
  if (!status.readError.empty()) {
    out << "the last read of this V-IPU controller failed (" << status.readError
        << "); the map is from the read before\n";
  }
  for (const std::string& problem : view.problems) out << "could not read a holder: " << problem << '\n';
  return out.str();
}

}  // namespace ipu::kubectl_ipu
