#include "command/shell_script.h"

#include <algorithm>
#include <array>

namespace ipu::runtime::command {
namespace {

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool isBlank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// Characters that end a word and a command.
bool isCommandSeparator(char c) {
  return c == ';' || c == '&' || c == '|' || c == '(' || c == ')';
}

// Reserved words that only open or close a compound command: dropped where a command starts.
bool isCompoundKeyword(std::string_view word) {
  static constexpr std::array<std::string_view, 12> kWords = {"if",    "then", "else", "elif", "fi", "while",
                                                              "until", "do",   "done", "{",    "}",  "!"};
  return std::find(kWords.begin(), kWords.end(), word) != kWords.end();
}

// Reserved words whose whole header is data, not a command: for NAME in WORDS, case WORD in, select NAME.
bool opensHeader(std::string_view word) {
  return word == "for" || word == "case" || word == "select" || word == "esac";
}

struct HereDocument {
  std::string delimiter;
  bool stripTabs = false;  // <<-
};

class Reader {
 public:
  explicit Reader(std::string_view script) : text_(script) {}

  std::vector<SimpleCommand> read() {
    while (at_ < text_.size()) step();
    endCommand();
    return std::move(commands_);
  }

 private:
  char peek(std::size_t ahead = 0) const { return at_ + ahead < text_.size() ? text_[at_ + ahead] : '\0'; }

  void step() {
    const char c = text_[at_];
    if (c == '\\') return backslash();
    if (c == '\'') return singleQuoted();
    if (c == '"') return doubleQuoted();
    if (c == '$' || c == '`') return expansion();
    if (c == '#' && !inWord_) return comment();
    if (isBlank(c)) {
      ++at_;
      return endWord();
    }
    if (c == '\n') {
      ++at_;
      endCommand();
      return skipHereDocuments();
    }
    if (c == '<' || c == '>' || (c == '&' && peek(1) == '>')) return redirection();
    if (isCommandSeparator(c)) {
      ++at_;
      return endCommand();
    }
    word_.text += c;
    inWord_ = true;
    ++at_;
  }

  void backslash() {
    inWord_ = true;
    if (peek(1) == '\n') {
      at_ += 2;  // a line continuation: the two lines are one
      inWord_ = !word_.text.empty();
      return;
    }
    if (at_ + 1 < text_.size()) word_.text += text_[at_ + 1];
    at_ += 2;
  }

  void singleQuoted() {
    inWord_ = true;
    const std::size_t end = text_.find('\'', at_ + 1);
    const std::size_t stop = end == std::string_view::npos ? text_.size() : end;
    word_.text.append(text_.substr(at_ + 1, stop - at_ - 1));
    at_ = stop + 1;
  }

  void doubleQuoted() {
    inWord_ = true;
    ++at_;
    while (at_ < text_.size() && text_[at_] != '"') {
      const char c = text_[at_];
      if (c == '\\' && at_ + 1 < text_.size()) {
        const char next = text_[at_ + 1];
        if (next == '\n') {
          at_ += 2;
          continue;
        }
        if (next == '$' || next == '`' || next == '"' || next == '\\') {
          word_.text += next;
          at_ += 2;
          continue;
        }
      }
      if (c == '$' || c == '`') {
        expansion();
        continue;
      }
      word_.text += c;
      ++at_;
    }
    ++at_;  // the closing quote
  }

  // $name, ${...}, $(...), $((...)), `...` and $'...' (bash's quoted string, not an expansion): the text kept
  // as written.
  void expansion() {
    inWord_ = true;
    const std::size_t start = at_;
    if (text_[at_] == '`') {
      ++at_;
      while (at_ < text_.size() && text_[at_] != '`') at_ += text_[at_] == '\\' ? 2 : 1;
      at_ = std::min(at_ + 1, text_.size());
    } else if (peek(1) == '\'') {
      ++at_;
      return singleQuoted();
    } else if (peek(1) == '(' || peek(1) == '{') {
      skipBalanced(peek(1), peek(1) == '(' ? ')' : '}');
    } else if (isNameChar(peek(1)) || std::string_view("@*#?$!-").find(peek(1)) != std::string_view::npos) {
      at_ += 2;
      if (isNameChar(text_[at_ - 1]) && !(text_[at_ - 1] >= '0' && text_[at_ - 1] <= '9'))
        while (at_ < text_.size() && isNameChar(text_[at_])) ++at_;
    } else {
      word_.text += '$';  // a lone dollar sign is itself
      ++at_;
      return;
    }
    word_.text.append(text_.substr(start, at_ - start));
    word_.expands = true;
  }

  // From the '$' before `open` to past its matching `close`, stepping over quoted text inside.
  void skipBalanced(char open, char close) {
    int depth = 0;
    ++at_;  // the '$'
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == '\\') {
        at_ += 2;
        continue;
      }
      if (c == '\'' || c == '"') {
        const std::size_t end = text_.find(c, at_ + 1);
        at_ = end == std::string_view::npos ? text_.size() : end + 1;
        continue;
      }
      ++at_;
      if (c == open) ++depth;
      if (c == close && --depth == 0) return;
    }
  }

  void comment() {
    const std::size_t end = text_.find('\n', at_);
    at_ = end == std::string_view::npos ? text_.size() : end;
  }

  // <, >, >>, <>, >|, <&, >&, &>, &>>, << and <<- (a here-document), <<< (a here-string). A word of digits
  // just before is the descriptor, not an argument; the next word is the target, not an argument either.
  void redirection() {
    if (inWord_ && !word_.expands && !word_.text.empty() &&
        std::all_of(word_.text.begin(), word_.text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      word_ = {};
      inWord_ = false;
    }
    endWord();
    bool hereDocument = false;
    bool stripTabs = false;
    if (peek() == '<' && peek(1) == '<' && peek(2) != '<') {
      hereDocument = true;
      at_ += 2;
      if (peek() == '-') {
        stripTabs = true;
        ++at_;
      }
    } else {
      if (peek() == '&') ++at_;
      ++at_;
      while (peek() == '>' || peek() == '<' || peek() == '&' || peek() == '|') ++at_;
    }
    nextWordIs_ = hereDocument ? NextWord::kHereDocumentDelimiter : NextWord::kRedirectionTarget;
    hereDocumentStripsTabs_ = stripTabs;
  }

  void endWord() {
    if (!inWord_) return;
    if (nextWordIs_ == NextWord::kHereDocumentDelimiter) {
      hereDocuments_.push_back({word_.text, hereDocumentStripsTabs_});
    } else if (nextWordIs_ == NextWord::kArgument) {
      command_.push_back(std::move(word_));
    }
    nextWordIs_ = NextWord::kArgument;
    word_ = {};
    inWord_ = false;
  }

  void endCommand() {
    endWord();
    nextWordIs_ = NextWord::kArgument;
    auto first = command_.begin();
    while (first != command_.end() && !first->expands && isCompoundKeyword(first->text)) ++first;
    command_.erase(command_.begin(), first);
    const bool header = !command_.empty() && !command_.front().expands && opensHeader(command_.front().text);
    if (!command_.empty() && !header) commands_.push_back(std::move(command_));
    command_.clear();
  }

  // After a newline: the bodies of the here-documents the line opened, up to each delimiter line.
  void skipHereDocuments() {
    for (const HereDocument& document : hereDocuments_) {
      while (at_ < text_.size()) {
        const std::size_t end = std::min(text_.find('\n', at_), text_.size());
        std::string_view line = text_.substr(at_, end - at_);
        at_ = std::min(end + 1, text_.size());
        if (document.stripTabs) line.remove_prefix(std::min(line.find_first_not_of('\t'), line.size()));
        if (line == document.delimiter) break;
      }
    }
    hereDocuments_.clear();
  }

  enum class NextWord { kArgument, kRedirectionTarget, kHereDocumentDelimiter };

  std::string_view text_;
  std::size_t at_ = 0;
  Word word_;
  bool inWord_ = false;
  NextWord nextWordIs_ = NextWord::kArgument;
  bool hereDocumentStripsTabs_ = false;
  std::vector<HereDocument> hereDocuments_;
  SimpleCommand command_;
  std::vector<SimpleCommand> commands_;
};

}  // namespace

std::vector<SimpleCommand> simpleCommands(std::string_view script) {
  return Reader(script).read();
}

}  // namespace ipu::runtime::command
