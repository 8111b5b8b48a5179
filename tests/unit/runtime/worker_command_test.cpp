// Reading a worker's command without running it, on a table of command lines as users write them
// (Graphcore's published manifests and tutorials among them) and on the shell constructs around them.
#include "command/worker_command.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "command/shell_script.h"

namespace ipu::runtime::command {
namespace {

using Argv = std::vector<std::string>;

// The script of the users' own 64-IPU manifest (../fixtures: bert-poprun-64ipus.yaml), as written.
const char* kBertPoprunScript = R"(cd ;
mkdir build;
cd build ;
git clone https://github.com/graphcore/examples.git;
cd examples/nlp/bert/pytorch;
apt update ;
apt upgrade -y;
DEBIAN_FRONTEND=noninteractive TZ='Europe/London' apt install $(< required_apt_packages.txt) -y ;
pip3 install -r requirements.txt ;
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_ALLOW_RUN_AS_ROOT=1 \
poprun \
--allow-run-as-root 1 \
--vv \
--num-instances 1 \
--num-replicas 16 \
--mpi-global-args="--tag-output" \
--ipus-per-replica 4 \
python3 run_pretraining.py \
--config pretrain_large_128_POD64 \
--dataset generated --training-steps 1
)";

// The users' 4-IPU manifest (bert-training-multi-ipu.yaml): the same set-up, then the model itself.
const char* kBertTrainingScript = R"(cd ;
mkdir build;
cd build ;
git clone https://github.com/graphcore/examples.git;
cd examples/nlp/bert/pytorch;
apt update ;
apt upgrade -y;
DEBIAN_FRONTEND=noninteractive TZ='Europe/London' apt install $(< required_apt_packages.txt) -y ;
pip3 install -r requirements.txt ;
python3 run_pretraining.py --dataset generated --config pretrain_base_128_pod4 --training-steps 1
)";

struct Case {
  const char* what;
  Argv argv;
  CommandKind kind;
  Argv found = {};  // kLauncher: the launcher's command; kUnclear: the one that hides what runs
};

class ReadWorkerCommandTest : public ::testing::TestWithParam<Case> {};

TEST_P(ReadWorkerCommandTest, ReadsTheCommandAsTheShellWouldRunIt) {
  const Case& c = GetParam();
  const CommandReading reading = readWorkerCommand(c.argv);
  EXPECT_EQ(reading.kind, c.kind) << c.what << ": " << reading.why;
  EXPECT_EQ(reading.found, c.found) << c.what;
  EXPECT_EQ(reading.why.empty(), c.kind != CommandKind::kUnclear) << c.what << ": " << reading.why;
}

const Case kCases[] = {
    // Graphcore's manifests and tutorials.
    {"the users' 64-IPU manifest: poprun after set-up lines, VAR=value prefixes and continuations",
     {"/bin/bash", "-c", "--", kBertPoprunScript},
     CommandKind::kLauncher,
     {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
      "OMPI_ALLOW_RUN_AS_ROOT=1",
      "poprun",
      "--allow-run-as-root",
      "1",
      "--vv",
      "--num-instances",
      "1",
      "--num-replicas",
      "16",
      "--mpi-global-args=--tag-output",
      "--ipus-per-replica",
      "4",
      "python3",
      "run_pretraining.py",
      "--config",
      "pretrain_large_128_POD64",
      "--dataset",
      "generated",
      "--training-steps",
      "1"}},
    {"the users' 4-IPU manifest: the model run directly",
     {"/bin/bash", "-c", "--", kBertTrainingScript},
     CommandKind::kRankProgram},
    {"Graphcore's Kubernetes tutorial: poprun as the program",
     {"poprun", "--vv", "--num-instances=2", "--num-replicas=4", "--ipus-per-replica=1", "python3",
      "mnist.py"},
     CommandKind::kLauncher,
     {"poprun", "--vv", "--num-instances=2", "--num-replicas=4", "--ipus-per-replica=1", "python3",
      "mnist.py"}},
    {"Graphcore's IPU operator example: cd && python3 train.py",
     {"/bin/bash", "-c", "--",
      "cd /public_examples/applications/tensorflow/cnns/training && python3 train.py --dataset imagenet "
      "--generated-data --model resnet --model-size 50 --batch-size 1 --iterations 10"},
     CommandKind::kRankProgram},
    {"an interactive worker: sleep infinity",
     {"/bin/bash", "-c", "--", "sleep infinity"},
     CommandKind::kRankProgram},
    {"a notebook", {"jupyter-notebook", "--no-browser", "--port", "8888"}, CommandKind::kRankProgram},
    // Launchers as the program.
    {"mpirun as the program",
     {"mpirun", "-np", "4", "python3", "-c", "print(1)"},
     CommandKind::kLauncher,
     {"mpirun", "-np", "4", "python3", "-c", "print(1)"}},
    {"mpiexec by its path",
     {"/usr/bin/mpiexec", "-n", "2", "./a.out"},
     CommandKind::kLauncher,
     {"/usr/bin/mpiexec", "-n", "2", "./a.out"}},
    {"Debian's mpirun.openmpi",
     {"mpirun.openmpi", "-np", "2", "prog"},
     CommandKind::kLauncher,
     {"mpirun.openmpi", "-np", "2", "prog"}},
    {"env with variables before mpirun",
     {"env", "-u", "X", "OMPI_ALLOW_RUN_AS_ROOT=1", "mpirun", "prog"},
     CommandKind::kLauncher,
     {"env", "-u", "X", "OMPI_ALLOW_RUN_AS_ROOT=1", "mpirun", "prog"}},
    {"a program named like a launcher but another", {"mpirunner", "--help"}, CommandKind::kRankProgram},
    // Launchers in scripts.
    {"sh -c with mpirun",
     {"sh", "-c", "mpirun --tag-output -np 2 python3 /app/x.py"},
     CommandKind::kLauncher,
     {"mpirun", "--tag-output", "-np", "2", "python3", "/app/x.py"}},
    {"bash -ec, set -o pipefail, then exec mpiexec",
     {"bash", "-o", "pipefail", "-ec", "set -x\nexport A=1\nexec mpiexec -n 2 prog | tee log"},
     CommandKind::kLauncher,
     {"exec", "mpiexec", "-n", "2", "prog"}},
    {"in an if, after a test",
     {"sh", "-c", "if [ -x /usr/bin/poprun ]; then poprun --vv python3 a.py; fi"},
     CommandKind::kLauncher,
     {"poprun", "--vv", "python3", "a.py"}},
    {"timeout and nice before it",
     {"sh", "-c", "timeout -s INT 3h nice -n 5 mpirun prog"},
     CommandKind::kLauncher,
     {"timeout", "-s", "INT", "3h", "nice", "-n", "5", "mpirun", "prog"}},
    {"a nested bash -c",
     {"sh", "-c", "cd /w && bash -c 'mpirun -np 2 prog'"},
     CommandKind::kLauncher,
     {"mpirun", "-np", "2", "prog"}},
    {"busybox sh", {"busybox", "sh", "-c", "mpirun prog"}, CommandKind::kLauncher, {"mpirun", "prog"}},
    {"a sourced virtualenv, then mpirun",
     {"bash", "-lc", "source /opt/venv/bin/activate && mpirun -np 2 python train.py"},
     CommandKind::kLauncher,
     {"mpirun", "-np", "2", "python", "train.py"}},
    // Mentions that are not commands.
    {"mpirun only as an argument, a quoted word and a redirection target",
     {"sh", "-c", "echo 'mpirun -np 2'; which mpirun > mpirun; cat mpirun # mpirun here\nls"},
     CommandKind::kRankProgram},
    {"command -v only asks",
     {"sh", "-c", "command -v mpirun >/dev/null && python3 a.py"},
     CommandKind::kRankProgram},
    {"a here-document's body is data",
     {"sh", "-c", "cat > run.txt <<'EOF'\nmpirun -np 2 prog\nEOF\npython3 a.py"},
     CommandKind::kRankProgram},
    {"a for loop over launcher names",
     {"sh", "-c", "for l in mpirun poprun; do echo $l; done"},
     CommandKind::kRankProgram},
    {"the rank test of an e2e job",
     {"sh", "-c", "echo rank $OMPI_COMM_WORLD_RANK; [ $OMPI_COMM_WORLD_RANK != 1 ] || exit 3"},
     CommandKind::kRankProgram},
    // What cannot be seen into.
    {"a script file",
     {"/bin/bash", "/workspace/train.sh"},
     CommandKind::kUnclear,
     {"/bin/bash", "/workspace/train.sh"}},
    {"a .sh as the program", {"./run.sh", "--big"}, CommandKind::kUnclear, {"./run.sh", "--big"}},
    {"a script file after set-up, in a script",
     {"sh", "-c", "cd /w; ./launch.sh 4"},
     CommandKind::kUnclear,
     {"./launch.sh", "4"}},
    {"the program in a variable",
     {"sh", "-c", "$LAUNCHER python3 a.py"},
     CommandKind::kUnclear,
     {"$LAUNCHER", "python3", "a.py"}},
    {"eval", {"bash", "-c", "eval \"$CMD\""}, CommandKind::kUnclear, {"eval", "$CMD"}},
    {"a Kubernetes $(VAR) as the program",
     {"$(LAUNCHER)", "prog"},
     CommandKind::kUnclear,
     {"$(LAUNCHER)", "prog"}},
    {"a Kubernetes $(VAR) as the program of the script",
     {"sh", "-c", "$(LAUNCHER) prog"},
     CommandKind::kUnclear,
     {"$(LAUNCHER)", "prog"}},
    {"a Kubernetes $(VAR) as an argument",
     {"sh", "-c", "mpirun -np $(WORKERS) prog"},
     CommandKind::kLauncher,
     {"mpirun", "-np", "$(WORKERS)", "prog"}},
    {"an escaped $$(VAR) is literal to Kubernetes", {"$$(NAME)", "x"}, CommandKind::kRankProgram},
    {"a shell reading its standard input",
     {"sh", "-c", "curl -s http://x/run | bash"},
     CommandKind::kUnclear,
     {"bash"}},
    {"a launcher wins over something unclear",
     {"sh", "-c", "./prepare.sh\nmpirun prog"},
     CommandKind::kLauncher,
     {"mpirun", "prog"}},
};

INSTANTIATE_TEST_SUITE_P(CommandLines, ReadWorkerCommandTest, ::testing::ValuesIn(kCases));

TEST(ReadWorkerCommandTest, CountsTheLinesOfATopLevelScript) {
  EXPECT_EQ(readWorkerCommand({"/bin/bash", "-c", "--", kBertPoprunScript}).scriptLines, 20);
  EXPECT_EQ(readWorkerCommand({"sh", "-c", "mpirun prog"}).scriptLines, 1);
  EXPECT_EQ(readWorkerCommand({"mpirun", "prog"}).scriptLines, 0);
}

struct ScriptCase {
  const char* what;
  const char* script;
  std::vector<SimpleCommand> commands;
};

class SimpleCommandsTest : public ::testing::TestWithParam<ScriptCase> {};

TEST_P(SimpleCommandsTest, ReadsEverySimpleCommandWordByWord) {
  EXPECT_EQ(simpleCommands(GetParam().script), GetParam().commands) << GetParam().what;
}

Word word(const char* text) {
  return {text, false};
}
Word expanding(const char* text) {
  return {text, true};
}

const ScriptCase kScripts[] = {
    {"quotes removed, expansions kept as written, every operator a separator",
     "A=\"x y\" prog 'a b' \"$HOME/c\" ${D:-e} $(f \"g)\") `h`&&k|l;m&n\n(o)",
     {{word("A=x y"), word("prog"), word("a b"), expanding("$HOME/c"), expanding("${D:-e}"),
       expanding("$(f \"g)\")"), expanding("`h`")},
      {word("k")},
      {word("l")},
      {word("m")},
      {word("n")},
      {word("o")}}},
    {"redirections and their descriptors dropped",
     "prog 2>&1 >out <in 3>>log &>all arg",
     {{word("prog"), word("arg")}}},
    {"here-document bodies skipped up to their delimiter",
     "cat <<-END >f; a\n\tmpirun\n\tEND\nb",
     {{word("cat")}, {word("a")}, {word("b")}}},
    {"an unterminated quote runs to the end",
     "echo 'never closed; mpirun",
     {{word("echo"), word("never closed; mpirun")}}},
    {"a backslash-newline joins lines; compound words dropped",
     "if true; then\n  a \\\n  b; fi",
     {{word("true")}, {word("a"), word("b")}}},
};

INSTANTIATE_TEST_SUITE_P(Scripts, SimpleCommandsTest, ::testing::ValuesIn(kScripts));

}  // namespace
}  // namespace ipu::runtime::command
