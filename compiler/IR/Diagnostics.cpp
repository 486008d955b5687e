#include "IR/Diagnostics.h"
#include "IR/ClipText.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <iterator>

namespace kiln {

char DiagError::ID = 0;

std::string SourceLoc::str() const {
  if (file.empty() && !known())
    return "";
  if (!known())
    return file;
  return fmt::format("{}:{}:{}", file.empty() ? "<input>" : file, line, col);
}

void DiagError::log(llvm::raw_ostream &os) const {
  std::string where = loc_.str();
  if (!where.empty())
    os << where << ": ";
  os << "error: " << message_;
}

std::string bytesText(uint64_t bytes) {
  const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  unsigned u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  if (u == 0)
    return fmt::format("{} bytes", bytes);
  return fmt::format("{:.1f} {} ({} bytes)", v, units[u], bytes);
}

// The text a user sees: errorToString cuts the long words of each error.

/// Characters (UTF-8 sequences) in `s`: its bytes but continuation bytes.
static size_t charCount(llvm::StringRef s) {
  return llvm::count_if(s, [](char c) { return (uint8_t(c) & 0xC0) != 0x80; });
}

std::string clipText(llvm::StringRef text, size_t max) {
  size_t chars = charCount(text);
  if (chars <= max)
    return text.str();
  std::string note = fmt::format("...({} chars)", chars);
  size_t keep = max > note.size() ? max - note.size() : 1;
  // The first `keep` characters: stop before the lead byte of the next one.
  size_t end = 0;
  for (size_t seen = 0; end < text.size(); ++end)
    if ((uint8_t(text[end]) & 0xC0) != 0x80 && seen++ == keep)
      break;
  return text.take_front(end).str() + note;
}

std::string clipLongWords(llvm::StringRef message, size_t max) {
  auto isSpace = [](char c) { return c == ' ' || c == '\n' || c == '\t'; };
  auto isMark = [](char c) {
    return llvm::StringRef("'\"`()[]{}<>,;:.").contains(c);
  };
  std::string out;
  while (!message.empty()) {
    size_t n = 0;
    while (n < message.size() && isSpace(message[n]))
      ++n;
    out += message.take_front(n);
    message = message.drop_front(n);
    n = 0;
    while (n < message.size() && !isSpace(message[n]))
      ++n;
    llvm::StringRef word = message.take_front(n);
    message = message.drop_front(n);
    if (charCount(word) <= max) {
      out += word;
      continue;
    }
    // Up to 3 quotes or marks either side stay, and are not counted.
    size_t lead = 0, trail = 0;
    while (lead < 3 && isMark(word[lead]))
      ++lead;
    while (trail < 3 && isMark(word[word.size() - 1 - trail]))
      ++trail;
    out += word.take_front(lead);
    out += clipText(word.drop_front(lead).drop_back(trail), max);
    out += word.take_back(trail);
  }
  return out;
}

std::string errorToString(llvm::Error err) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::handleAllErrors(std::move(err), [&](const llvm::ErrorInfoBase &e) {
    if (!out.empty())
      os << "\n";
    if (!e.isA<DiagError>())
      os << "error: ";
    e.log(os);
  });
  return clipLongWords(os.str());
}

} // namespace kiln
