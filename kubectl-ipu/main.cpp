// kubectl-ipu: the kubectl plugin (`kubectl ipu ...`). Wiring only: the terminal and the cluster connection;
// the commands live in plugin_command.cpp.
#include <cstdlib>
#include <iostream>

#include <sys/ioctl.h>
#include <unistd.h>

#include "kube/cluster_config.h"
#include "kube/cpprest_transport.h"
#include "kubectl-ipu/plugin_command.h"

namespace {

int terminalWidth() {
  if (const char* columns = std::getenv("COLUMNS")) {
    const int value = std::atoi(columns);
    if (value > 0) return value;
  }
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    return size.ws_col;
  return 80;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ipu;
  const std::vector<std::string> args(argv + 1, argv + argc);
  kubectl_ipu::Terminal terminal{std::cout,
                                 std::cerr,
                                 isatty(STDOUT_FILENO) != 0,
                                 terminalWidth(),
                                 std::getenv("NO_COLOR") != nullptr && *std::getenv("NO_COLOR") != '\0',
                                 std::chrono::system_clock::now(),
                                 &std::cin};
  const kubectl_ipu::Connect connect = [](const std::string& kubeconfig,
                                          const std::string& context) -> Result<kubectl_ipu::Connection> {
    auto config = kube::loadDefaultConfig(kubeconfig, context);
    if (!config) return config.error();
    auto transport = kube::CppRestTransport::create(*config);
    if (!transport) return transport.error();
    kubectl_ipu::Connection connection;
    connection.ns = config->ns;
    connection.client =
        std::make_unique<kube::RestClient>(std::shared_ptr<kube::Transport>(std::move(*transport)), *config,
                                           kube::ClientOptions{.userAgent = "kubectl-ipu"});
    return connection;
  };
  return kubectl_ipu::runPlugin(args, terminal, connect);
}
