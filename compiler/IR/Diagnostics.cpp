#include "IR/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

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
