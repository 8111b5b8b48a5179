// Reading a worker's command (runtime/command/): the operator reads every multi-worker job's command and
// script, which any namespace editor writes. The input is a command line, its words separated by NUL bytes
// (a last word of a sh -c script, say, may be most of the input); the whole input is also read as a script.
// Checks: nothing throws or runs away (every word of a script is at most as long as the script); the same
// input reads the same twice; a launcher reading names a launcher program among the words it found; an
// unclear one says why; a rank program reports nothing found.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "command/shell_script.h"
#include "command/worker_command.h"
#include "fuzz_check.h"

namespace {

using namespace ipu::runtime::command;

std::vector<std::string> wordsOf(std::string_view input) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = input.find('\0', start);
    words.emplace_back(input.substr(start, end - start));
    if (end == std::string_view::npos) return words;
    start = end + 1;
  }
}

std::string_view baseName(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  std::size_t wordBytes = 0;
  for (const SimpleCommand& command : simpleCommands(input)) {
    FUZZ_CHECK(!command.empty());
    for (const Word& word : command) wordBytes += word.text.size();
  }
  FUZZ_CHECK(wordBytes <= input.size());

  const std::vector<std::string> argv = wordsOf(input);
  const CommandReading reading = readWorkerCommand(argv);
  FUZZ_CHECK(reading == readWorkerCommand(argv));
  switch (reading.kind) {
    case CommandKind::kLauncher: {
      bool named = false;
      for (const std::string& word : reading.found) named = named || isLauncherProgram(baseName(word));
      FUZZ_CHECK(named);
      FUZZ_CHECK(reading.why.empty());
      break;
    }
    case CommandKind::kUnclear:
      FUZZ_CHECK(!reading.why.empty());
      FUZZ_CHECK(!reading.found.empty());
      break;
    case CommandKind::kRankProgram:
      FUZZ_CHECK(reading.found.empty() && reading.why.empty());
      break;
  }
  FUZZ_CHECK(reading.scriptLines >= 0);
  return 0;
}
