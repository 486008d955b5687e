//===- Commands.h - The kiln subcommands -----------------------*- C++ -*-===//
#ifndef KILN_CLI_COMMANDS_H
#define KILN_CLI_COMMANDS_H

#include "Args.h"
#include "FileRoles.h"

#include "Engine.h"
#include "HostTensor.h"
#include "IR/Graph.h"
#include "Safetensors.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace kiln::cli {

const CommandSpec &checkCommand();
const CommandSpec &runCommand();
const CommandSpec &opsCommand();
const CommandSpec &planCommand();
const CommandSpec &compileCommand();
const CommandSpec &benchCommand();
const CommandSpec &cacheCommand();
const CommandSpec &cacheListCommand();
const CommandSpec &cacheShowCommand();
const CommandSpec &cacheVerifyCommand();
const CommandSpec &cacheExportCommand();
const CommandSpec &cacheImportCommand();
const CommandSpec &cacheWhyCommand();

/// NAME=FILE pairs of a repeated option (--input, --output).
llvm::Expected<std::map<std::string, std::string>>
namedFiles(const std::vector<std::string> &specs,
           llvm::ArrayRef<Value *> values, llvm::StringRef option);
/// The files of --input and --output, by value name.
struct GraphFiles {
  std::map<std::string, std::string> inputs, outputs;
};
/// --input and --output of graph `g`, after refusing (exit 2) an output
/// that is the graph, an input, the parameters file or another output;
/// `roles` may hold the command's other files (bench's --json).
llvm::Expected<GraphFiles> graphFiles(const ParsedArgs &args, const Graph &g,
                                      FileRoles roles = {});
/// One tensor per graph input, read from the named files.
llvm::Expected<std::vector<HostTensor>>
readInputs(const Graph &g, const std::map<std::string, std::string> &files);
/// Writes an output as FILE.npy, or as tensor `name` of FILE.safetensors.
llvm::Error writeOutput(const std::string &name, const HostTensor &t,
                        const std::string &path);
/// One line: type, min, max, mean, NaN count, first elements.
std::string summarize(const Value &v, const HostTensor &t);
/// kiln run's options beyond its files, checked before anything runs.
struct RunOptions {
  std::string device = "auto"; // auto, gpu or cpu
  bool check = false;
  std::optional<double> tolerance; // --tolerance, for --check
  uint64_t maxBytes = 8ull << 30;  // --max-memory, for the reference
  uint64_t maxDeviceBytes = 0;     // --max-memory if given, for the GPU
  MatmulPrecision matmulPrecision = MatmulPrecision::Highest; // on the GPU
};
/// kiln run's GPU path (RunGpu.cpp).
int runOnGpu(const Graph &g, llvm::ArrayRef<HostTensor> inputs,
             const SafetensorsFile *params, const std::string &paramPath,
             const std::map<std::string, std::string> &outputFiles,
             const RunOptions &opts);

/// The graph's input shapes once --bind binds every named dim.
llvm::Expected<std::vector<llvm::SmallVector<int64_t, 6>>>
boundInputShapes(const Graph &g, const ParsedArgs &args);

/// --matmul-precision MODE, shared by every command that compiles (plan,
/// compile, run, bench, cache why).
extern const OptionSpec kMatmulPrecisionOption;
/// The precision --matmul-precision names (highest when absent); a value
/// other than PyTorch's three names is a usage error that lists them.
llvm::Expected<MatmulPrecision> matmulPrecisionOption(const ParsedArgs &args);
/// CompileOptions::fromEnvironment() with --matmul-precision applied: where
/// plan, compile, bench and `cache why` start.
llvm::Expected<CompileOptions> compileOptions(const ParsedArgs &args);

/// Executable::compile of the graph file named by the first positional
/// argument, with --bind and --arch (checked against the archs NVRTC
/// compiles for) applied to `opts`: what plan, compile and `cache why` run.
llvm::Expected<std::unique_ptr<Executable>>
compileFromArgs(const ParsedArgs &args, CompileOptions opts);

/// A CompileOptions::onKernelReady for the CLI: once building the kernels
/// has taken a second, "kiln: 12/40 kernels ready (3.1 s)" on stderr,
/// rewritten in place on a terminal, every 5 s otherwise, and at the end.
std::function<void(size_t, size_t)> kernelProgress();

/// Prints a user error to stderr and returns ExitUsageError for a
/// UsageError, else ExitUserError.
int reportError(llvm::Error err);

} // namespace kiln::cli

#endif
