//===- Diagnostics.h - User-facing errors ----------------------*- C++ -*-===//
//
// Two kinds of failure, kept apart as in LLVM and Halide:
//  * mistakes a user can make (bad text, bad shapes, bad files) travel as
//    llvm::Error carrying a DiagError: "file:line:col: error: what; hint";
//  * compiler bugs are assert / llvm_unreachable.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_DIAGNOSTICS_H
#define KILN_IR_DIAGNOSTICS_H

#include "llvm/Support/Error.h"

#include <fmt/format.h>
#include <string>

namespace kiln {

/// A position in a source file. line and col are 1-based; 0 means unknown.
struct SourceLoc {
  std::string file;
  unsigned line = 0;
  unsigned col = 0;
  bool known() const { return line != 0; }
  /// "file:line:col", "file", or "" as much as is known.
  std::string str() const;
};

/// A user error with an optional location.
class DiagError : public llvm::ErrorInfo<DiagError> {
public:
  static char ID;
  DiagError(SourceLoc loc, std::string message)
      : loc_(std::move(loc)), message_(std::move(message)) {}

  const SourceLoc &loc() const { return loc_; }
  const std::string &text() const { return message_; }
  /// "file:line:col: error: message" (the prefix only where known).
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  SourceLoc loc_;
  std::string message_;
};

/// Builds a located user error with fmt formatting.
template <typename... Args>
llvm::Error diag(const SourceLoc &loc, fmt::format_string<Args...> f,
                 Args &&...args) {
  return llvm::make_error<DiagError>(
      loc, fmt::format(f, std::forward<Args>(args)...));
}

/// Builds an unlocated user error (files, command line, driver).
template <typename... Args>
llvm::Error userError(fmt::format_string<Args...> f, Args &&...args) {
  return llvm::make_error<DiagError>(
      SourceLoc{}, fmt::format(f, std::forward<Args>(args)...));
}

/// A size as messages write it: "1.5 GiB (1610612736 bytes)", "12 bytes".
std::string bytesText(uint64_t bytes);

/// Renders any error (consuming it) as the text a user should see.
std::string errorToString(llvm::Error err);

} // namespace kiln

#endif
