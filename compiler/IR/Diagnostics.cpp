#include "IR/Diagnostics.h"

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
  return os.str();
}

} // namespace kiln
