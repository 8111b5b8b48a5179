#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "settings/whole_number.h"

// What the launch of one job instance runs: pure functions from the instance's shape, its hosts and the rank
// program to the poprun or mpirun command line, so every shape is unit-tested without starting anything.
//
// Words: a job instance has its own partition and is its own world; it has `workers` pods, and one rank (one
// poprun "instance", one host process) runs in each; each rank drives `replicasPerWorker` model replicas of
// `ipusPerReplica` IPUs.
namespace ipu::runtime::launch {

// A setting the launch reads is wrong (a number that is not one: settings::SettingError, its base).
struct LaunchError : settings::SettingError {
  using SettingError::SettingError;
};

using settings::wholeNumberIn;

struct InstanceShape {
  int workers = 1;
  int replicasPerWorker = 1;
  int ipusPerReplica = 1;

  int ranks() const { return workers; }
  int totalReplicas() const { return workers * replicasPerWorker; }
  bool operator==(const InstanceShape&) const = default;
};

using Environment = std::vector<std::pair<std::string, std::string>>;
using GetEnv = std::function<std::optional<std::string>(const std::string&)>;

// The shape from the variables the operator sets (IPUJOB_WORKERS_PER_INSTANCE, IPUJOB_REPLICAS_PER_WORKER,
// IPUJOB_IPUS_PER_INSTANCE). LaunchError naming the variable when one is missing, not a number, out of range,
// or when the IPUs do not divide evenly into replicas.
InstanceShape shapeFromEnvironment(const GetEnv& getEnv);

// The hosts of the instance from IPU_RUNTIME_PEERS (comma-separated, worker 0 first); LaunchError when it is
// missing, has empty or invalid names, or does not list `workers` hosts.
std::vector<std::string> peersFromEnvironment(const GetEnv& getEnv, int workers);

// What poprun passes to the rank on worker `rank` of the instance (docs/architecture.md, "Runtime and
// launch").
Environment popdistEnvironment(const InstanceShape& shape, int rank);

// Variables the launcher's own environment hands on to every rank when set (what poprun exports).
const std::vector<std::string>& passedThroughVariables();

struct LaunchInputs {
  InstanceShape shape;
  std::vector<std::string> hosts;             // one per worker, worker 0 first
  std::vector<std::string> command;           // the rank program and its arguments
  std::string rshAgent;                       // e.g. "/opt/ipu-runtime/ipu-runtime rsh"
  bool runAsRoot = false;                     // mpirun refuses root unless told
  std::vector<std::string> presentVariables;  // of passedThroughVariables(), those set in the launcher
};

// poprun --host h0,h1 --num-instances W --num-replicas R --ipus-per-replica I --mpi-global-args=… -- CMD…
// (the V-IPU partition comes from IPUOF_VIPU_API_* in the environment, as the operator set it).
std::vector<std::string> poprunCommand(const LaunchInputs& inputs);

// mpirun with one application context per rank, pinned to its host, with the POPDIST_* values poprun would
// pass that rank and the launcher's IPUOF_*/PATH/... exported; --bind-to none, --tag-output.
std::vector<std::string> mpirunCommand(const LaunchInputs& inputs);

// The hostfile a user's own mpirun reads (OMPI_MCA_orte_default_hostfile): "<host> slots=1" per worker.
std::string hostfile(const std::vector<std::string>& hosts);

// OpenMPI's TCP transports (btl for the ranks, oob for its daemons) kept to `interfaces`, those that route to
// the instance's peers (net::interfacesToPeers), as OMPI_MCA_{btl,oob}_tcp_if_include: a pod with several
// networks (an RDMA one, a management one) then never waits on an interface that does not reach its peers.
// The user's choice wins: a transport whose if_include or if_exclude is set in the environment (the two
// exclude each other in OpenMPI) or named in the launcher's command line (`--mca btl_tcp_if_include ...`) is
// left alone. Empty `interfaces`: nothing. Pure.
Environment mpiInterfaceEnvironment(const std::vector<std::string>& interfaces, const GetEnv& getEnv,
                                    const std::vector<std::string>& command);

// What a pod offers OpenMPI's messaging besides TCP and shared memory, as launch.cpp reads it.
struct MpiSurroundings {
  bool fabricDevices = false;               // /dev/infiniband, /dev/hfi1_*, /dev/ipath* or /dev/qib*
  std::vector<std::string> parameterFiles;  // OpenMPI's MCA parameter files found, the one that wins last
};

// OMPI_MCA_pml with cm left out when the pod has no fabric device: OpenMPI's cm messaging layer (its MTLs:
// PSM2 for Omni-Path, PSM for InfiniPath, OFI) has nothing to drive over plain Ethernet and OpenMPI chooses
// ob1 there anyway, but loading the PSM and PSM2 libraries to find that out costs every rank 0.2 s of its
// MPI_Init (Debian 12's OpenMPI 4.1; docs/benchmarks.md). "^cm", or the parameter files' own exclusion list
// with cm added ("^ucx" in Debian's becomes "^ucx,cm": the variable replaces the file's value). Nothing when
// the user chose: OMPI_MCA_pml or OMPI_MCA_mtl in the environment, `--mca pml|mtl` or OMPI_MCA_pml|mtl in the
// launcher's command line, a pml list to use in a parameter file, or MTLs to use (`mtl = psm2`). Pure.
Environment mpiMessagingEnvironment(const MpiSurroundings& surroundings, const GetEnv& getEnv,
                                    const std::vector<std::string>& command);

// The command as one line for logs and for /bin/sh (each argument single-quoted when it needs it).
std::string shellJoin(const std::vector<std::string>& argv);

// Set to "full" in the worker's environment, the launch logs the whole command line it runs (with every -x
// of the generated mpirun) instead of its summary.
inline constexpr const char* kEnvLogLaunch = "IPU_RUNTIME_LOG_LAUNCH";

// The one line the launch logs about what it runs, readable however long the command: for the runtime's
// own poprun/mpirun (`generated`), the launcher, one rank per worker and the rank program, shortened; for a
// launcher of the user's (launcher.command, or the worker command when it is one), that command, or for a
// sh -c script the script's size and the launcher line found in it. Pure.
std::string launchSummary(const std::vector<std::string>& generated, const LaunchInputs& inputs,
                          bool userLauncher);

}  // namespace ipu::runtime::launch
