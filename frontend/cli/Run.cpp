//===- Run.cpp - kiln run: execute a graph on .npy inputs -----------------===//
//
// `kiln run` executes on the GPU through the compiled kernels where there is
// one (RunGpu.cpp; --check compares with the float64 reference), else, or
// with --device cpu, on the float64 reference evaluator, and says which.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "Execute.h"
#include "FileRoles.h"
#include "GpuExecute.h"
#include "IR/ClipText.h"
#include "Npy.h"
#include "Safetensors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace kiln::cli {

/// NAME=FILE pairs from repeated options; a bare FILE is allowed when the
/// graph has exactly one value of that kind.
llvm::Expected<std::map<std::string, std::string>>
namedFiles(const std::vector<std::string> &specs,
           llvm::ArrayRef<Value *> values, llvm::StringRef option) {
  std::map<std::string, std::string> out;
  for (const std::string &s : specs) {
    auto [name, file] = llvm::StringRef(s).split('=');
    bool named =
        llvm::any_of(values, [&](Value *v) { return v->name() == name; });
    if (!named && values.size() == 1 && !llvm::StringRef(s).contains('=')) {
      name = values[0]->name();
      file = s;
    } else if (!named) {
      std::string known;
      for (Value *v : values)
        known += fmt::format("{}{}", known.empty() ? "" : ", ", v->name());
      return usageError("{} {}: the graph has no {} named '{}' (it has: {}); "
                        "write {} NAME=FILE",
                        option.str(), s,
                        option == "--input" ? "input" : "output", name.str(),
                        known, option.str());
    }
    if (file.empty())
      return usageError("{} {}: no file is named; write {} {}=FILE",
                        option.str(), s, option.str(), name.str());
    if (!out.emplace(name.str(), file.str()).second)
      return usageError("{} is given twice for '{}'", option.str(), name.str());
  }
  return out;
}

/// How to make an array of `t` in numpy, for error hints.
std::string conversionHint(DType t) {
  switch (t) {
  case DType::F32:
    return "convert it, e.g. x.astype(np.float32)";
  case DType::F16:
    return "convert it, e.g. x.astype(np.float16)";
  case DType::F64:
    return "convert it, e.g. x.astype(np.float64)";
  case DType::I64:
    return "convert it, e.g. x.astype(np.int64)";
  case DType::Bool:
    return "convert it, e.g. x.astype(np.bool_)";
  case DType::BF16:
    return "numpy has no bfloat16: save it with safetensors instead, e.g. "
           "safetensors.torch.save_file({'x': t.bfloat16()}, 'x.safetensors')";
  }
  return "";
}

bool isSafetensors(llvm::StringRef path) {
  return path.endswith(".safetensors");
}

/// One input from FILE.npy, or from the tensor of that name in
/// FILE.safetensors.
llvm::Expected<HostTensor> readInput(const Value &in, const std::string &path) {
  if (!isSafetensors(path))
    return readNpy(path);
  llvm::Expected<SafetensorsFile> f = readSafetensors(path);
  if (!f)
    return f.takeError();
  const HostTensor *t = f->find(in.name());
  if (!t)
    return userError("{} has no tensor named '{}' for the input of that "
                     "name",
                     path, in.name());
  return *t;
}

llvm::Expected<std::vector<HostTensor>>
readInputs(const Graph &g, const std::map<std::string, std::string> &files) {
  std::vector<HostTensor> out;
  for (Value *in : g.inputs()) {
    auto it = files.find(in->name());
    if (it == files.end())
      return usageError("graph input '{}' {} has no data; pass --input "
                        "{}=FILE.npy",
                        in->name(), in->type().str(), in->name());
    llvm::Expected<HostTensor> t = readInput(*in, it->second);
    if (!t)
      return t.takeError();
    if (t->dtype != in->dtype())
      return userError("input '{}' in {} is {}, but the graph declares {}; "
                       "{}",
                       in->name(), it->second, t->typeStr(), in->type().str(),
                       conversionHint(in->dtype()));
    out.push_back(std::move(*t));
  }
  return out;
}

/// Writes an output as FILE.npy, or as tensor `name` of FILE.safetensors.
llvm::Error writeOutput(const std::string &name, const HostTensor &t,
                        const std::string &path) {
  if (isSafetensors(path))
    return writeSafetensors(path, {{name, t}});
  if (t.dtype == DType::BF16)
    return userError("output '{}' is bf16, which .npy cannot hold (numpy "
                     "has no bfloat16); write it as --output "
                     "{}=FILE.safetensors",
                     name, name);
  return writeNpy(path, t);
}

std::string summarize(const Value &v, const HostTensor &t) {
  if (t.numel() == 0)
    return fmt::format("{}: {}  empty", v.name(), v.type().str());
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t nans = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double x = t.get(i);
    if (std::isnan(x)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  int64_t finite = t.numel() - nans;
  std::string head;
  for (int64_t i = 0; i < std::min<int64_t>(t.numel(), 6); ++i)
    head += fmt::format("{}{:.6g}", i ? ", " : "", t.get(i));
  return fmt::format("{}: {}  min {:.6g}  max {:.6g}  mean {:.6g}  NaN {}  "
                     "first [{}{}]",
                     v.name(), v.type().str(), finite ? lo : NAN,
                     finite ? hi : NAN, finite ? sum / finite : NAN, nans, head,
                     t.numel() > 6 ? ", ..." : "");
}

namespace {

/// Multiply-adds (or element operations) node `n` costs the reference
/// evaluator: a contraction's K per result element, a convolution's
/// window per element of the larger image, else one per element read or
/// written.
double referenceWork(const Node &n) {
  auto numel = [](const Value *v) {
    return v ? static_cast<double>(v->shape().numElements()) : 0.0;
  };
  const Value *x = n.operand(0);
  switch (n.info().family) {
  case OpFamily::Contraction: {
    const Shape &s = x->shape();
    return numel(n.result()) * (s.rank() ? double(s.sizes().back()) : 1.0);
  }
  case OpFamily::Convolution: {
    const Value *w = n.operand(1);
    double perOut = numel(w) / std::max<double>(1, w->shape().sizes()[0]);
    return std::max(numel(n.result()), numel(x)) * perOut;
  }
  case OpFamily::Normalization:
  case OpFamily::Reduction:
  case OpFamily::Binary:
  case OpFamily::Unary:
    break;
  }
  double work = numel(n.result());
  for (const Value *v : n.operands())
    work += numel(v);
  return work;
}

/// Work above which `kiln run` on the reference says what it computes
/// (about a tenth of a second and more).
constexpr double kSlowReferenceWork = 5e7;

/// --device, --check, --tolerance, --max-memory and --matmul-precision,
/// checked together.
llvm::Expected<RunOptions> runOptions(const ParsedArgs &args) {
  RunOptions o;
  llvm::Expected<MatmulPrecision> precision = matmulPrecisionOption(args);
  if (!precision)
    return precision.takeError();
  o.matmulPrecision = *precision;
  o.device = args.get("--device", "auto");
  if (o.device != "auto" && o.device != "gpu" && o.device != "cpu")
    return usageError("--device takes auto, gpu or cpu, not '{}'", o.device);
  o.check = args.has("--check");
  if (o.check && o.device == "cpu")
    return usageError("--check compares the GPU's outputs with the float64 "
                      "reference, which is what --device cpu runs: leave out "
                      "one of them");
  if (args.has("--tolerance")) {
    double tol = 0;
    if (llvm::StringRef(args.get("--tolerance")).getAsDouble(tol) ||
        !(tol >= 0 && std::isfinite(tol)))
      return usageError("--tolerance takes a number >= 0, got '{}'",
                        args.get("--tolerance"));
    if (!o.check)
      return usageError("--tolerance is for --check; add --check");
    o.tolerance = tol;
  }
  if (args.has("--max-memory")) {
    double gib = 0;
    // Up to 2^33 GiB, so that the bytes fit in 64 bits.
    if (llvm::StringRef(args.get("--max-memory")).getAsDouble(gib) ||
        !(gib > 0 && gib <= double(1ull << 33)))
      return usageError("--max-memory takes a positive number of GiB (at "
                        "most 2^33), got '{}'",
                        args.get("--max-memory"));
    o.maxBytes = static_cast<uint64_t>(gib * (1ull << 30));
    o.maxDeviceBytes = std::max<uint64_t>(o.maxBytes, 1);
  }
  return o;
}

} // namespace

llvm::Expected<GraphFiles> graphFiles(const ParsedArgs &args, const Graph &g,
                                      FileRoles roles) {
  GraphFiles f;
  auto inputs = namedFiles(args.all("--input"), g.inputs(), "--input");
  if (!inputs)
    return inputs.takeError();
  f.inputs = std::move(*inputs);
  auto outputs = namedFiles(args.all("--output"), g.outputs(), "--output");
  if (!outputs)
    return outputs.takeError();
  f.outputs = std::move(*outputs);
  roles.reads("the graph", args.positional[0]);
  for (const auto &[name, file] : f.inputs)
    roles.reads(fmt::format("input '{}'", name), file);
  if (args.has("--params"))
    roles.reads("the parameters file", args.get("--params"));
  for (const auto &[name, file] : f.outputs)
    roles.writes(fmt::format("--output '{}'", name), file);
  if (llvm::Error e = roles.check())
    return e;
  return f;
}

namespace {

int runRun(const ParsedArgs &args) {
  llvm::Expected<RunOptions> runOpts = runOptions(args);
  if (!runOpts)
    return reportError(runOpts.takeError());
  const RunOptions &opts = *runOpts;
  llvm::Expected<std::unique_ptr<Graph>> g = loadGraph(args.positional[0]);
  if (!g)
    return reportError(g.takeError());
  const Graph &graph = **g;

  llvm::Expected<GraphFiles> files = graphFiles(args, graph);
  if (!files)
    return reportError(files.takeError());
  llvm::Expected<std::vector<HostTensor>> inputs =
      readInputs(graph, files->inputs);
  if (!inputs)
    return reportError(inputs.takeError());

  std::optional<SafetensorsFile> paramFile;
  std::string paramPath = args.get("--params");
  if (!paramPath.empty()) {
    llvm::Expected<SafetensorsFile> f = readSafetensors(paramPath);
    if (!f)
      return reportError(f.takeError());
    paramFile = std::move(*f);
  }
  bool noGpu = false;
  if (opts.device != "cpu") {
    // No context yet: compiling creates it while the kernels compile.
    llvm::Expected<rt::DeviceTraits> dev = rt::Device::probe(0);
    if (dev)
      return runOnGpu(graph, *inputs, paramFile ? &*paramFile : nullptr,
                      paramPath, files->outputs, opts);
    if (opts.device == "gpu" || opts.check)
      return reportError(llvm::joinErrors(userError("cannot run on the GPU:"),
                                          dev.takeError()));
    llvm::consumeError(dev.takeError());
    noGpu = true;
  }
  // f16 and bf16 results rounded op by op, as the GPU's kernels and
  // PyTorch's eager ops store them: the same answer on either device.
  EvalOptions eo;
  eo.roundToStorage = true;
  eo.maxBytes = opts.maxBytes;
  eo.printIR = CompileOptions::fromEnvironment().printIR;
  // The reference evaluator is single-threaded float64: announce the nodes
  // that may take long (contractions, large results) and report any node
  // slow enough that a user would wonder whether it is still running.
  eo.onNodeStart = [](const Node &n, size_t i, size_t count) {
    if (referenceWork(n) >= kSlowReferenceWork)
      llvm::errs() << fmt::format(
          "  [{}/{}] computing {} = {} {} ...\n", i + 1, count,
          n.result()->name(), n.info().name.str(), n.result()->type().str());
  };
  eo.onNodeDone = [](const Node &n, size_t i, size_t count, double secs) {
    if (secs >= 1.0)
      llvm::errs() << fmt::format("  [{}/{}] {} = {} {} took {:.1f} s\n", i + 1,
                                  count, n.result()->name(),
                                  n.info().name.str(), n.result()->type().str(),
                                  secs);
  };
  llvm::Expected<Execution> run = executeReference(
      graph, *inputs, paramFile ? &*paramFile : nullptr, paramPath, eo);
  if (!run)
    return reportError(run.takeError());
  for (const std::string &w : run->warnings) // "FILE: warning: ..." each
    llvm::errs() << clipLongWords(w) << "\n";

  llvm::errs() << fmt::format(
      "ran '{}'{} on the float64 reference "
      "evaluator (CPU{})\n",
      graph.name(),
      run->bindings.empty()
          ? ""
          : fmt::format(" with {}", bindingsStr(run->bindings)),
      noGpu ? "; there is no GPU here" : "");
  for (size_t i = 0; i < run->outputs.size(); ++i) {
    const Value &v = *run->specialized->outputs()[i];
    HostTensor t = fromRef(run->outputs[i], v.dtype());
    llvm::outs() << summarize(v, t) << "\n";
    auto it = files->outputs.find(v.name());
    if (it == files->outputs.end())
      continue;
    if (llvm::Error e = writeOutput(v.name(), t, it->second))
      return reportError(std::move(e));
    llvm::errs() << fmt::format("wrote {} to {}\n", v.name(), it->second);
  }
  return ExitOk;
}

} // namespace

const CommandSpec &runCommand() {
  static const CommandSpec spec = {
      "run",
      "run a graph on .npy inputs and write .npy outputs",
      "kiln run FILE --input NAME=FILE.npy... [--params FILE.safetensors] "
      "[--output [NAME=]FILE.npy]... [--matmul-precision MODE]",
      "Runs FILE on the given inputs. Named dims are bound from the input "
      "shapes.\nParameters come from --params by name, else from their "
      "initialisers in FILE.\nEach output is summarised on stdout and, "
      "with --output, written as .npy in the\ngraph's dtype. On a GPU "
      "(--device auto or gpu) the graph is compiled to fused\nkernels "
      "through the kernel cache and run there; --check compares with "
      "the\nfloat64 reference. With --device cpu, or when there is no GPU, "
      "the float64\nreference evaluator runs on the CPU, meant for small "
      "shapes; it rounds f16 and\nbf16 results op by op, as the GPU and "
      "PyTorch do.\n--matmul-precision sets how the GPU's f32 linear "
      "multiplies; the reference is\nfloat64 whatever it says.",
      {
          {"--input", "NAME=FILE",
           "an input as .npy, or the tensor NAME of a .safetensors file "
           "(NAME= may be left out for a one-input graph)",
           true},
          {"--params", "FILE", "parameters as .safetensors, by name"},
          {"--output", "NAME=FILE",
           "write an output as .npy or .safetensors (NAME= may be left out "
           "for one output)",
           true},
          {"--device", "WHERE",
           "auto (default: the GPU when there is one), "
           "gpu or cpu"},
          {"--check", nullptr,
           "compare the GPU's outputs with the float64 reference "
           "evaluator; fails when ||gpu - ref|| / ||ref|| > --tolerance"},
          {"--tolerance", "X",
           "for --check (default by output dtype: f32 1e-5, f16 1e-3, bf16 "
           "8e-3)"},
          {"--max-memory", "GIB",
           "refuse, before allocating them, tensors beyond GIB: on the "
           "reference evaluator, the live tensors at their peak (8 bytes "
           "an element, inputs and parameters included; default 8, and the "
           "process needs more than that, for the files' own copies); on "
           "the GPU, the inputs, parameters, outputs and intermediates "
           "(default: the device's free memory)"},
          kMatmulPrecisionOption,
      },
      1,
      1,
      runRun};
  return spec;
}

} // namespace kiln::cli
