//===- Commands.h - The kiln subcommands -----------------------*- C++ -*-===//
#ifndef KILN_CLI_COMMANDS_H
#define KILN_CLI_COMMANDS_H

#include "Args.h"

#include "IR/Graph.h"

#include <memory>

namespace kiln::cli {

const CommandSpec &checkCommand();
const CommandSpec &runCommand();
const CommandSpec &opsCommand();

/// Prints a user error to stderr and returns ExitUserError.
int reportError(llvm::Error err);

} // namespace kiln::cli

#endif
