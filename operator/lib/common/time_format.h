#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace ipu {

// UTC timestamps: the two formats the API server accepts, and the one our logs use.
// metav1.Time, whole seconds ("2026-01-02T03:04:05Z"), as in Events' firstTimestamp/lastTimestamp;
std::string formatTime(Clock::WallTime time);
// metav1.MicroTime, exactly six fractional digits ("2026-01-02T03:04:05.000000Z"), as in a Lease's
// acquireTime/renewTime. The server rejects a MicroTime with any other precision.
std::string formatMicroTime(Clock::WallTime time);
// Milliseconds ("2026-01-02T03:04:05.678Z"), for log lines.
std::string formatMilliTime(Clock::WallTime time);

// A metav1.Time as the API server writes it ("2026-01-02T03:04:05Z", optionally with a fraction, which is
// dropped); nullopt for anything else.
std::optional<Clock::WallTime> parseTime(std::string_view text);

// "45s", "12m", "1h02m", "3d04h": how long something has lasted, as people read it (negative: "0s").
std::string formatElapsed(Clock::Duration elapsed);

}  // namespace ipu
