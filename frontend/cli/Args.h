//===- Args.h - Command-line parsing for the kiln tools --------*- C++ -*-===//
//
// Each command declares its options once; the same table drives parsing,
// `--help` and the did-you-mean hint for a mistyped option.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CLI_ARGS_H
#define KILN_CLI_ARGS_H

#include "IR/Diagnostics.h"

#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::cli {

/// Exit codes of every kiln command (documented in `kiln --help`).
enum ExitCode : int {
  ExitOk = 0,
  ExitUserError = 1,  // bad graph, bad data file, shape mismatch, ...
  ExitUsageError = 2, // bad command line
  ExitInternalError = 3,
};

/// A command line that parses but asks for what cannot be: an option value
/// out of its choices or range, a name the graph does not have, options that
/// do not go together. Printed as any user error; the exit code is 2.
class UsageError : public llvm::ErrorInfo<UsageError, DiagError> {
public:
  static char ID;
  using ErrorInfo::ErrorInfo;
};

template <typename... Args>
llvm::Error usageError(fmt::format_string<Args...> f, Args &&...args) {
  return llvm::make_error<UsageError>(
      SourceLoc{}, fmt::format(f, std::forward<Args>(args)...));
}

/// `err` as a usage error (exit code 2), keeping its message.
llvm::Error asUsageError(llvm::Error err);

struct OptionSpec {
  const char *name;    // "--input"
  const char *metavar; // "NAME=FILE"; nullptr for a flag
  const char *help;
  bool repeatable = false;
  const char *shortName = nullptr; // "-s", the same option
};

struct ParsedArgs {
  /// The command's name ("plan", "cache why"), for messages.
  std::string command;
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values; // by option name
  bool has(const std::string &opt) const { return values.count(opt) != 0; }
  /// The last value of `opt`, or `fallback`.
  std::string get(const std::string &opt,
                  const std::string &fallback = "") const;
  const std::vector<std::string> &all(const std::string &opt) const;
};

/// A command; one named "cache list" is a subcommand: `kiln cache list`.
struct CommandSpec {
  const char *name;
  const char *summary;     // one line, for `kiln --help`
  const char *usage;       // "kiln check FILE [options]"
  const char *description; // a paragraph for `kiln CMD --help`
  std::vector<OptionSpec> options;
  unsigned minPositional = 0, maxPositional = 0;
  int (*run)(const ParsedArgs &args) = nullptr;
};

/// Parses `args` (after the command name). `--help` is handled by the
/// caller. Accepts `--opt value` and `--opt=value`.
llvm::Expected<ParsedArgs> parseArgs(const CommandSpec &cmd,
                                     const std::vector<std::string> &args);

std::string helpText(const CommandSpec &cmd);

} // namespace kiln::cli

#endif
