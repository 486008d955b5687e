#include "Lexer.h"

#include "llvm/ADT/StringExtras.h"

#include <optional>

namespace kiln {

std::string Token::describe() const {
  if (kind == TokKind::Eof)
    return "end of file";
  return fmt::format("'{}'", text.str());
}

namespace {

/// Walks the text byte by byte, tracking line and column.
class Lexer {
public:
  Lexer(llvm::StringRef text, llvm::StringRef fileName)
      : text_(text), file_(fileName) {}

  llvm::Expected<std::vector<Token>> run();

private:
  char cur() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  char at(size_t ahead) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool done() const { return pos_ >= text_.size(); }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  SourceLoc here() const { return SourceLoc{file_.str(), line_, col_}; }

  void skipSpaceAndComments();
  llvm::Expected<Token> next();
  Token lexName();
  llvm::Expected<Token> lexNumber();
  llvm::Expected<Token> lexString();
  std::optional<TokKind> punctuation(char c) const;

  llvm::StringRef text_;
  llvm::StringRef file_;
  size_t pos_ = 0;
  unsigned line_ = 1, col_ = 1;
  // Start of the token being lexed.
  size_t start_ = 0;
  unsigned startLine_ = 1, startCol_ = 1;

  Token make(TokKind kind) const {
    Token t;
    t.kind = kind;
    t.text = text_.slice(start_, pos_);
    t.line = startLine_;
    t.col = startCol_;
    return t;
  }
};

} // namespace

static bool isNameStart(char c) { return llvm::isAlpha(c) || c == '_'; }
static bool isNameChar(char c) { return llvm::isAlnum(c) || c == '_'; }

void Lexer::skipSpaceAndComments() {
  while (!done()) {
    char c = cur();
    if (c == '#') {
      while (!done() && cur() != '\n')
        advance();
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      advance();
    } else {
      return;
    }
  }
}

std::optional<TokKind> Lexer::punctuation(char c) const {
  switch (c) {
  case '(':
    return TokKind::LParen;
  case ')':
    return TokKind::RParen;
  case '{':
    return TokKind::LBrace;
  case '}':
    return TokKind::RBrace;
  case '[':
    return TokKind::LBracket;
  case ']':
    return TokKind::RBracket;
  case ',':
    return TokKind::Comma;
  case ':':
    return TokKind::Colon;
  case ';':
    return TokKind::Semi;
  case '=':
    return TokKind::Equal;
  case '-':
    return TokKind::Minus;
  default:
    return std::nullopt;
  }
}

Token Lexer::lexName() {
  advance(); // first character, or '%'
  while (isNameChar(cur()))
    advance();
  Token t = make(TokKind::Name);
  if (t.text == "inf" || t.text == "nan")
    t.kind = TokKind::Float;
  return t;
}

llvm::Expected<Token> Lexer::lexNumber() {
  bool isFloat = false;
  while (llvm::isDigit(cur()))
    advance();
  if (cur() == '.') {
    isFloat = true;
    advance();
    while (llvm::isDigit(cur()))
      advance();
  }
  if (cur() == 'e' || cur() == 'E') {
    size_t digitsAt = (at(1) == '+' || at(1) == '-') ? 2 : 1;
    if (!llvm::isDigit(at(digitsAt)))
      return diag(here(), "exponent of '{}' has no digits; write e.g. 1e-5",
                  text_.slice(start_, pos_ + digitsAt).str());
    isFloat = true;
    for (size_t i = 0; i < digitsAt; ++i)
      advance();
    while (llvm::isDigit(cur()))
      advance();
  }
  if (isNameStart(cur()))
    return diag(here(),
                "unexpected '{}' after the number '{}'; separate a "
                "number from a name with a space or a comma",
                std::string(1, cur()), text_.slice(start_, pos_).str());
  return make(isFloat ? TokKind::Float : TokKind::Int);
}

llvm::Expected<Token> Lexer::lexString() {
  std::string value;
  advance(); // opening quote
  while (cur() != '"') {
    if (done() || cur() == '\n')
      return diag(SourceLoc{file_.str(), startLine_, startCol_},
                  "unterminated string; close it with '\"' on the same line");
    if (cur() == '\\') {
      char esc = at(1);
      if (esc != '"' && esc != '\\')
        return diag(here(), "unknown escape in string; only \\\" and \\\\ "
                            "are allowed");
      advance();
    }
    value += cur();
    advance();
  }
  advance(); // closing quote
  Token t = make(TokKind::String);
  t.str = std::move(value);
  return t;
}

static std::string describeChar(char c) {
  if (llvm::isPrint(c))
    return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", static_cast<unsigned char>(c));
}

llvm::Expected<Token> Lexer::next() {
  skipSpaceAndComments();
  start_ = pos_;
  startLine_ = line_;
  startCol_ = col_;
  if (done())
    return make(TokKind::Eof);
  char c = cur();
  if (isNameStart(c) || (c == '%' && isNameChar(at(1))))
    return lexName();
  if (llvm::isDigit(c) || (c == '.' && llvm::isDigit(at(1))))
    return lexNumber();
  if (c == '"')
    return lexString();
  if (std::optional<TokKind> kind = punctuation(c)) {
    advance();
    return make(*kind);
  }
  if (c == '%')
    return diag(here(), "'%' must be followed by a name or number, as in %0");
  if (pos_ == 0 && c == '\xef' && at(1) == '\xbb' && at(2) == '\xbf')
    return diag(here(), "the file starts with a UTF-8 byte order mark; save "
                        "it without one");
  if (static_cast<unsigned char>(c) >= 0x80)
    return diag(here(),
                "unexpected non-ASCII character ({}) in a .kg file: names "
                "and punctuation are ASCII (other text may stand only in "
                "comments and strings)",
                describeChar(c));
  return diag(here(), "unexpected character {} in a .kg file", describeChar(c));
}

llvm::Expected<std::vector<Token>> Lexer::run() {
  std::vector<Token> tokens;
  while (true) {
    llvm::Expected<Token> t = next();
    if (!t)
      return t.takeError();
    tokens.push_back(std::move(*t));
    if (tokens.back().is(TokKind::Eof))
      return tokens;
  }
}

llvm::Expected<std::vector<Token>> lex(llvm::StringRef text,
                                       llvm::StringRef fileName) {
  return Lexer(text, fileName).run();
}

} // namespace kiln
