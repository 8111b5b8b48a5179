#pragma once

#include <chrono>
#include <vector>

#include <sys/types.h>

namespace ipu::runtime::process {

// The live processes below `ancestor`: its children, theirs, and so on, as /proc shows them now (zombies
// left out). Processes that left the tree (a daemon whose parent exited) are found only if they were
// re-parented into it: see becomeSubreaper.
std::vector<pid_t> descendantsOf(pid_t ancestor);

// Makes this process the one its orphaned descendants are re-parented to (PR_SET_CHILD_SUBREAPER), instead
// of the pid namespace's init: a daemon started by something this process runs (fork + setsid) stays among
// its descendants, where stopDescendants finds it.
void becomeSubreaper();

// Ends every descendant of this process, whatever process group or session it is in: SIGTERM to each, up to
// `grace` for them to end, then SIGKILL to whatever is left (or has been started since), reaping its own
// children all along. Returns within grace + `afterKill`; true when no descendant is left.
bool stopDescendants(std::chrono::milliseconds grace, std::chrono::milliseconds afterKill);

// Reaps every child of this process that has ended, without waiting.
void reapEndedChildren();

}  // namespace ipu::runtime::process
