//===- Evaluator.cpp - The float64 reference evaluator --------------------===//
#include "ref/Evaluator.h"

#include "IR/FloatBits.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cassert>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <optional>

namespace kiln {

namespace {

/// "[2, 3]"
std::string sizesStr(llvm::ArrayRef<int64_t> sizes) {
  return fmt::format("[{}]", fmt::join(sizes, ", "));
}

/// Bytes a value takes in the evaluator (8 per element), saturating.
uint64_t valueBytes(const Value &v) {
  uint64_t bytes = 8;
  for (int64_t s : v.shape().sizes())
    bytes = llvm::SaturatingMultiply(bytes, static_cast<uint64_t>(s));
  return bytes;
}

llvm::Error checkStatic(const Graph &g) {
  for (const auto &v : g.values())
    if (!v->isLiteral() && !v->shape().isStatic())
      return userError(
          "cannot evaluate graph '{}': '{}' has shape {} with named dims; "
          "specialise the graph for concrete sizes first",
          g.name(), v->name(), v->shape().str());
  return llvm::Error::success();
}

llvm::Error checkSupplied(llvm::StringRef role,
                          llvm::ArrayRef<Value *> declared,
                          llvm::ArrayRef<RefTensor> given) {
  if (declared.size() != given.size())
    return userError("the graph declares {} {}s but {} were given",
                     declared.size(), role.str(), given.size());
  for (size_t i = 0; i < declared.size(); ++i) {
    llvm::SmallVector<int64_t, 6> want = declared[i]->shape().sizes();
    if (llvm::ArrayRef<int64_t>(want) !=
        llvm::ArrayRef<int64_t>(given[i].shape))
      return userError("{} '{}' has shape {} but the graph declares {}",
                       role.str(), declared[i]->name(),
                       sizesStr(given[i].shape), sizesStr(want));
    if (given[i].numel() != RefTensor::numElements(want))
      return userError("{} '{}' holds {} values but its shape {} needs {}",
                       role.str(), declared[i]->name(), given[i].numel(),
                       sizesStr(want), RefTensor::numElements(want));
  }
  return llvm::Error::success();
}

/// Per node, the results it reads (or makes) for the last time and that can
/// be freed once it has run. Values the graph returns live to the end; a
/// value read twice by one node is listed once.
std::vector<llvm::SmallVector<unsigned, 3>> freedAfter(const Graph &g) {
  const auto &nodes = g.nodes();
  std::vector<size_t> last(g.values().size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i)
    last[nodes[i]->result()->id()] = i;
  std::vector<llvm::SmallVector<Node *, 2>> users = g.users();
  llvm::DenseMap<const Node *, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i)
    index[nodes[i].get()] = i;
  for (const auto &v : g.values())
    if (v->isResult() && !users[v->id()].empty())
      last[v->id()] = index[users[v->id()].back()];
  std::vector<llvm::SmallVector<unsigned, 3>> freed(nodes.size());
  for (const auto &v : g.values())
    if (v->isResult() && !llvm::is_contained(g.outputs(), v.get()))
      freed[last[v->id()]].push_back(v->id());
  return freed;
}

/// "parameter 'w' f32[2, 3]"
std::string describeValue(const Value &v) {
  const char *kind = v.isInput() ? "input" : v.isParam() ? "parameter" : "";
  return fmt::format("{}{}'{}' {}", kind, *kind ? " " : "", v.name(),
                     v.type().str());
}

} // namespace

/// Refuses, with what it would need and the largest tensor live at the
/// peak, a graph whose peak of live tensors exceeds the budget. Inputs,
/// params and literals count throughout.
static llvm::Error
checkMemory(const Graph &g,
            const std::vector<llvm::SmallVector<unsigned, 3>> &freed,
            uint64_t maxBytes, const std::string &limitText = "") {
  std::vector<bool> live(g.values().size(), false);
  uint64_t bytes = 0, peak = 0;
  for (const auto &v : g.values())
    if (!v->isResult()) {
      live[v->id()] = true;
      bytes = llvm::SaturatingAdd(bytes, valueBytes(*v));
    }
  std::vector<bool> livePeak = live;
  peak = bytes;
  const Node *peakNode = nullptr;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node &n = *g.nodes()[i];
    live[n.result()->id()] = true;
    bytes = llvm::SaturatingAdd(bytes, valueBytes(*n.result()));
    if (bytes > peak) {
      peak = bytes;
      peakNode = &n;
      livePeak = live;
    }
    for (unsigned id : freed[i]) {
      live[id] = false;
      bytes -= valueBytes(*g.values()[id]);
    }
  }
  if (peak <= maxBytes)
    return llvm::Error::success();
  const Value *largest = nullptr;
  for (const auto &v : g.values())
    if (livePeak[v->id()] &&
        (!largest || valueBytes(*v) > valueBytes(*largest)))
      largest = v.get();
  return userError(
      "evaluating graph '{}' needs {} of live tensors at its peak{}, more "
      "than {}; the largest is {}, {} at 8 bytes an element; use smaller "
      "sizes{}",
      g.name(), bytesText(peak),
      peakNode
          ? fmt::format(" (while computing '{}')", peakNode->result()->name())
          : std::string(),
      limitText.empty() ? "the limit of " + bytesText(maxBytes) : limitText,
      describeValue(*largest), bytesText(valueBytes(*largest)),
      limitText.empty() ? " or raise the limit" : "");
}

llvm::Error checkEvaluationMemory(const Graph &g, uint64_t maxBytes,
                                  const std::string &limitText) {
  if (llvm::Error e = checkStatic(g))
    return e;
  return checkMemory(g, freedAfter(g), maxBytes, limitText);
}

namespace {

// The reference holds i64 values in double, exact only within
// kMaxExactInteger: any integer result beyond may have been rounded (2^53 + 1
// rounds to 2^53), so it is refused rather than returned wrong.

/// The first element of an i64 tensor beyond kMaxExactInteger, if any.
std::optional<int64_t> firstInexactInteger(const RefTensor &t) {
  if (t.dtype != DType::I64)
    return std::nullopt;
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    if (!(std::abs(t.data[i]) <= kMaxExactInteger))
      return i;
  return std::nullopt;
}

std::string inexactIntegerText(const RefTensor &t, int64_t i,
                               const std::string &what) {
  return fmt::format(
      "{} has a value beyond +-(2^53 - 1) at element {} of {} (about {:.17g}): "
      "the float64 reference evaluator holds i64 values exactly only within "
      "that range (PyTorch's int64 arithmetic is exact, or wraps, beyond it); "
      "use smaller values",
      what, i, sizesStr(t.shape), t.data[i]);
}

/// Inputs and params of dtype i64 within kMaxExactInteger.
llvm::Error checkExactIntegers(llvm::StringRef kind,
                               llvm::ArrayRef<Value *> declared,
                               llvm::ArrayRef<RefTensor> given) {
  for (size_t i = 0; i < given.size(); ++i)
    if (std::optional<int64_t> at = firstInexactInteger(given[i]))
      return userError("{}",
                       inexactIntegerText(given[i], *at,
                                          fmt::format("{} '{}'", kind.str(),
                                                      declared[i]->name())));
  return llvm::Error::success();
}

} // namespace

double roundToDType(double v, DType t) {
  switch (t) {
  case DType::F16:
    return halfToDouble(doubleToHalf(v));
  case DType::BF16:
    return bfloat16ToDouble(doubleToBFloat16(v));
  default:
    return v;
  }
}

static void roundInPlace(RefTensor &t, DType dt) {
  t.dtype = dt;
  for (double &x : t.data)
    x = roundToDType(x, dt);
}

llvm::Expected<std::vector<RefTensor>>
evaluate(const Graph &g, llvm::ArrayRef<RefTensor> inputs,
         llvm::ArrayRef<RefTensor> params, const EvalOptions &opts) {
  if (llvm::Error e = checkStatic(g))
    return e;
  if (llvm::Error e = checkSupplied("input", g.inputs(), inputs))
    return e;
  if (llvm::Error e = checkSupplied("param", g.params(), params))
    return e;
  std::vector<llvm::SmallVector<unsigned, 3>> freed = freedAfter(g);
  if (llvm::Error e = checkMemory(g, freed, opts.maxBytes))
    return e;
  if (llvm::Error e = checkExactIntegers("input", g.inputs(), inputs))
    return e;
  if (llvm::Error e = checkExactIntegers("param", g.params(), params))
    return e;

  // Caller-owned tensors by pointer, results and literals owned here.
  std::vector<const RefTensor *> at(g.values().size(), nullptr);
  std::vector<RefTensor> owned(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i)
    at[g.inputs()[i]->id()] = &inputs[i];
  for (size_t i = 0; i < params.size(); ++i)
    at[g.params()[i]->id()] = &params[i];
  for (const auto &v : g.values())
    if (v->isLiteral()) {
      owned[v->id()] = RefTensor::scalar(v->dtype(), v->literal());
      at[v->id()] = &owned[v->id()];
    }

  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node &n = *g.nodes()[i];
    assert(n.info().eval && "op has no reference evaluation");
    llvm::SmallVector<const RefTensor *, 3> ops;
    for (Value *v : n.operands())
      ops.push_back(v ? at[v->id()] : nullptr);
    const DType dt = n.result()->dtype();
    const bool narrow = opts.roundToStorage && isHalf(dt);
    // Rounded copies of operands of another dtype; reserved, so that the
    // pointers to them stay valid.
    llvm::SmallVector<RefTensor, 1> converted;
    if (narrow) {
      converted.reserve(ops.size());
      for (size_t k = 0; k < ops.size(); ++k) {
        const Value *v = n.operands()[k];
        if (v && !v->isLiteral() && v->dtype() != dt) {
          converted.push_back(*ops[k]);
          roundInPlace(converted.back(), dt);
          ops[k] = &converted.back();
        }
      }
    }
    if (opts.onNodeStart)
      opts.onNodeStart(n, i, g.nodes().size());
    auto start = std::chrono::steady_clock::now();
    llvm::Expected<RefTensor> r = n.info().eval(n, ops);
    if (!r)
      return r.takeError();
    if (opts.onNodeDone)
      opts.onNodeDone(n, i, g.nodes().size(),
                      std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    unsigned id = n.result()->id();
    assert(llvm::ArrayRef<int64_t>(r->shape) ==
               llvm::ArrayRef<int64_t>(n.result()->shape().sizes()) &&
           "eval result disagrees with the inferred shape");
    owned[id] = std::move(*r);
    if (narrow)
      roundInPlace(owned[id], dt);
    else if (opts.roundF32 && dt == DType::F32)
      for (double &v : owned[id].data)
        v = static_cast<float>(v);
    if (std::optional<int64_t> at = firstInexactInteger(owned[id]))
      return diag(n.loc(), "{}: {}", n.info().name.str(),
                  inexactIntegerText(
                      owned[id], *at,
                      fmt::format("its result '{}'", n.result()->name())));
    at[id] = &owned[id];
    for (unsigned dead : freed[i])
      owned[dead] = RefTensor();
  }

  // Results move out; returned inputs and params are copied.
  std::vector<RefTensor> outs;
  for (Value *v : g.outputs())
    outs.push_back(v->isResult() ? std::move(owned[v->id()]) : *at[v->id()]);
  return outs;
}

} // namespace kiln
