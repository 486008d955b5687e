//===- FileRoles.h - The files a command reads and writes ------*- C++ -*-===//
//
// Checked before a command does any work, so that no output replaces a file
// the command reads (the graph, an input, the parameters) or another output,
// however the paths are spelled: "./x.npy", a symbolic link and a hard link
// to the same file are one file.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CLI_FILEROLES_H
#define KILN_CLI_FILEROLES_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kiln::cli {

class FileRoles {
public:
  /// `role` says what the file is for, in words: "the graph", "input 'x'".
  void reads(std::string role, std::string path);
  /// `option` is how the user named it: "--output a", "--dot".
  void writes(std::string option, std::string path);
  /// A UsageError naming both roles of the first file written that is also
  /// read or written by another role.
  llvm::Error check() const;

private:
  struct Entry {
    std::string role, path;
    bool written;
  };
  std::vector<Entry> entries_;
};

} // namespace kiln::cli

#endif
