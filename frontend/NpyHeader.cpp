#include "NpyHeader.h"

#include "FileUtil.h"

#include "llvm/ADT/StringExtras.h"

#include <optional>

namespace kiln {

namespace {

/// A recursive-descent reader over the header text.
class HeaderParser {
public:
  HeaderParser(llvm::StringRef text, llvm::StringRef path)
      : text_(text), path_(path) {}

  llvm::Expected<NpyHeader> parse();

private:
  llvm::Error expected(llvm::StringRef what) const;
  void skipSpace();
  bool consume(char c);
  llvm::Error expect(char c, llvm::StringRef what);
  llvm::Expected<std::string> parseString();
  llvm::Expected<bool> parseBool();
  llvm::Expected<llvm::SmallVector<int64_t, 6>> parseShape();
  llvm::Error parseEntry(NpyHeader &h, unsigned &seen);

  llvm::StringRef text_;
  llvm::StringRef path_;
  size_t pos_ = 0;
};

llvm::Error HeaderParser::expected(llvm::StringRef what) const {
  llvm::StringRef next = text_.substr(pos_, 12).rtrim();
  std::string found = next.empty() ? std::string("the end of the header")
                                   : fmt::format("'{}'", next.str());
  return fileError(path_,
                   "malformed .npy header: expected {} at offset {}, "
                   "found {}; header is \"{}\"",
                   what.str(), pos_, found, text_.rtrim().str());
}

void HeaderParser::skipSpace() {
  while (pos_ < text_.size() && llvm::isSpace(text_[pos_]))
    ++pos_;
}

bool HeaderParser::consume(char c) {
  skipSpace();
  if (pos_ < text_.size() && text_[pos_] == c) {
    ++pos_;
    return true;
  }
  return false;
}

llvm::Error HeaderParser::expect(char c, llvm::StringRef what) {
  return consume(c) ? llvm::Error::success() : expected(what);
}

llvm::Expected<std::string> HeaderParser::parseString() {
  skipSpace();
  char quote = pos_ < text_.size() ? text_[pos_] : 0;
  if (quote != '\'' && quote != '"')
    return expected("a quoted string");
  size_t end = text_.find(quote, pos_ + 1);
  if (end == llvm::StringRef::npos)
    return expected("a closing quote");
  std::string s = text_.slice(pos_ + 1, end).str();
  pos_ = end + 1;
  return s;
}

llvm::Expected<bool> HeaderParser::parseBool() {
  skipSpace();
  for (bool b : {true, false}) {
    llvm::StringRef word = b ? "True" : "False";
    if (text_.substr(pos_).startswith(word)) {
      pos_ += word.size();
      return b;
    }
  }
  return expected("True or False for 'fortran_order'");
}

llvm::Expected<llvm::SmallVector<int64_t, 6>> HeaderParser::parseShape() {
  skipSpace();
  char close = consume('(') ? ')' : consume('[') ? ']' : 0;
  if (!close)
    return expected("a tuple of sizes for 'shape', like (3, 4)");
  llvm::SmallVector<int64_t, 6> shape;
  while (!consume(close)) {
    skipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && llvm::isDigit(text_[pos_]))
      ++pos_;
    int64_t size;
    if (text_.slice(start, pos_).getAsInteger(10, size))
      return expected("a non-negative integer size in 'shape'");
    shape.push_back(size);
    consume('L'); // Python 2 long literals
    if (consume(close))
      break;
    if (!consume(','))
      return expected("',' or a closing bracket in 'shape'");
  }
  return shape;
}

llvm::Error HeaderParser::parseEntry(NpyHeader &h, unsigned &seen) {
  llvm::Expected<std::string> key = parseString();
  if (!key)
    return key.takeError();
  if (llvm::Error e = expect(':', fmt::format("':' after key '{}'", *key)))
    return e;
  if (*key == "descr") {
    seen |= 1;
    llvm::Expected<std::string> s = parseString();
    if (!s)
      return s.takeError();
    h.descr = *s;
  } else if (*key == "fortran_order") {
    seen |= 2;
    llvm::Expected<bool> b = parseBool();
    if (!b)
      return b.takeError();
    h.fortranOrder = *b;
  } else if (*key == "shape") {
    seen |= 4;
    auto shape = parseShape();
    if (!shape)
      return shape.takeError();
    h.shape = std::move(*shape);
  } else {
    return expected(fmt::format("one of the keys 'descr', 'fortran_order', "
                                "'shape' (not '{}')",
                                *key));
  }
  return llvm::Error::success();
}

llvm::Expected<NpyHeader> HeaderParser::parse() {
  NpyHeader h;
  if (llvm::Error e = expect('{', "'{' opening the header dict"))
    return e;
  unsigned seen = 0;
  while (!consume('}')) {
    if (llvm::Error e = parseEntry(h, seen))
      return e;
    if (consume('}'))
      break;
    if (!consume(','))
      return expected("',' or '}' after a dict entry");
  }
  if (seen != 7)
    return fileError(path_,
                     "malformed .npy header: the dict must have the keys "
                     "'descr', 'fortran_order' and 'shape'; header is \"{}\"",
                     text_.rtrim().str());
  return h;
}

} // namespace

llvm::Expected<NpyHeader> parseNpyHeader(llvm::StringRef text,
                                         llvm::StringRef path) {
  return HeaderParser(text, path).parse();
}

std::string formatNpyHeader(const NpyHeader &h) {
  std::string shape;
  for (int64_t s : h.shape)
    shape += fmt::format("{}, ", s);
  if (h.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (h.shape.size() == 1)
    shape.pop_back(); // "(5,)"
  return fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': ({}), }}",
                     h.descr, h.fortranOrder ? "True" : "False", shape);
}

} // namespace kiln
