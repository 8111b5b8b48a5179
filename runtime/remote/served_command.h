#pragma once

#include <string>

#include "remote/connection.h"

namespace ipu::runtime::remote {

// Runs `commandLine` with /bin/sh -c (as sshd would), relaying the peer's Stdin/StdinClose/Signal frames to
// it and its stdout/stderr back as frames, then sends its Exit status. When the connection breaks the
// command's process group is terminated (then killed after a grace period): a lost launcher leaves nothing
// running. Logs what it served on stderr.
void serveCommand(Connection& connection, const std::string& commandLine, const std::string& peer);

}  // namespace ipu::runtime::remote
