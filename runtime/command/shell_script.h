#pragma once

#include <string>
#include <string_view>
#include <vector>

// Reading a POSIX sh/bash script without running it: which simple commands it runs, word by word. Enough to
// tell what program each command starts (command/worker_command.h), not a shell: nothing is expanded, and
// what only running could tell is marked so rather than guessed.
namespace ipu::runtime::command {

// A word as the shell would see it before expanding it: quotes and backslashes removed, `expands` when its
// value is only known when the script runs ($name, ${...}, $(...), `...`; their text is kept as written).
struct Word {
  std::string text;
  bool expands = false;
  bool operator==(const Word&) const = default;
};

// One simple command: assignments, program and arguments, in order; redirections and their targets dropped.
using SimpleCommand = std::vector<Word>;

// The script's simple commands in order. Commands end at a newline, ; & | && || ( ) and the words that open
// or close compound commands (if/then/else/elif/fi, while/until/do/done, { }, !), which are dropped; the
// headers of `for`, `case` and `select` are not commands and are dropped whole. Comments, redirections and
// the bodies of here-documents are skipped; a backslash-newline joins two lines. Never throws: an
// unterminated quote or expansion runs to the end of the script.
std::vector<SimpleCommand> simpleCommands(std::string_view script);

}  // namespace ipu::runtime::command
