#pragma once

#include <string_view>

namespace ipu {

// Crash tests need the process to die at exact points of a job's life (after a status write and before the
// V-IPU call it announces, say). A failpoint named in $IPU_OPERATOR_CRASH_AT (comma-separated) kills the
// process with SIGKILL when reached, so no destructor, flush or lease release runs: the same as `kill -9` at
// that instant. Unset (always, outside tests), a failpoint costs one relaxed load.
void failpoint(std::string_view name);

}  // namespace ipu
