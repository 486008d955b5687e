//===- CliHarness.h - The built tools, run as a user runs them -*- C++ -*-===//
//
// Shared by the CLI tests: a temporary folder per test, files written into
// it, and `kiln` (or another built program) run as a process with its
// standard output and error captured.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_CLI_CLIHARNESS_H
#define KILN_TESTS_CLI_CLIHARNESS_H

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln::test {

struct CliResult {
  int code;
  std::string out, err;
};

/// The whole file, or "" when it cannot be read.
inline std::string readFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  return buf ? (*buf)->getBuffer().str() : "";
}

inline bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

/// `s` with each run of spaces and line breaks as one space: help text as
/// prose, whichever column its lines were wrapped at.
inline std::string unwrapped(const std::string &s) {
  std::string out;
  for (char c : s) {
    const bool space = c == ' ' || c == '\n';
    if (!space)
      out += c;
    else if (out.empty() || out.back() != ' ')
      out += ' ';
  }
  return out;
}

/// A file of the source tree, by its path from the root.
inline std::string src(const std::string &rel) {
  return std::string(KILN_SOURCE_DIR) + "/" + rel;
}

/// The built `kiln`.
inline std::string kilnBinary() {
  return std::string(KILN_BINARY_DIR) + "/frontend/kiln";
}

/// A test with a temporary folder of its own, removed after it.
class CliFixture : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kiln-cli", dir_));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir_); }

  /// A path in the test's folder.
  std::string tmp(const std::string &name) const {
    return std::string(dir_.str()) + "/" + name;
  }
  void write(const std::string &path, const std::string &text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec) << path;
    os << text;
  }
  /// Runs `program` with `args` (standard input from `stdinPath`, "" for
  /// none), capturing stdout and stderr; the capture files are removed.
  /// Children inherit this process's environment.
  CliResult exec(const std::string &program,
                 const std::vector<std::string> &args,
                 const std::string &stdinPath = "") {
    std::string n = std::to_string(runs_++);
    std::string out = tmp("stdout" + n), err = tmp("stderr" + n);
    std::vector<llvm::StringRef> argv = {program};
    for (const std::string &a : args)
      argv.push_back(a);
    llvm::Optional<llvm::StringRef> redirects[] = {
        llvm::StringRef(stdinPath), llvm::StringRef(out), llvm::StringRef(err)};
    int code = llvm::sys::ExecuteAndWait(program, argv, llvm::None, redirects);
    CliResult r{code, readFile(out), readFile(err)};
    llvm::sys::fs::remove(out);
    llvm::sys::fs::remove(err);
    return r;
  }
  CliResult kiln(const std::vector<std::string> &args,
                 const std::string &stdinPath = "") {
    return exec(kilnBinary(), args, stdinPath);
  }

  llvm::SmallString<128> dir_;
  int runs_ = 0;
};

} // namespace kiln::test

#endif
