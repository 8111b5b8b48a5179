#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace ipu::cmd {

// A V-IPU controller given as NAME=HOST:PORT.
struct VipuEndpoint {
  std::string name;
  std::string host;
  int port = 0;
};

// Everything ipu-operator is configured with; each default is shown by --help.
struct OperatorFlags {
  std::string kubeconfig;  // empty: $KUBECONFIG, then in-cluster, then ~/.kube/config
  VipuEndpoint vipu;
  int workers = 2;
  double qps = 50;
  int burst = 100;
  std::string shmSize = "10Gi";
  bool leaderElect = true;
  std::string leaderElectionNamespace;  // empty: the kubeconfig's namespace
  std::string logLevel = "info";
  bool helpRequested = false;
};

// NAME=HOST:PORT; InvalidArgument naming what is wrong.
Result<VipuEndpoint> parseVipuEndpoint(const std::string& text);

// InvalidArgument (the message names the flag) for unknown flags, bad values and a missing --vipu-controller.
Result<OperatorFlags> parseOperatorFlags(const std::vector<std::string>& args);
std::string operatorUsage();

}  // namespace ipu::cmd
