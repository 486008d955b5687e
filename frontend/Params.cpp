#include "Params.h"

#include "ref/Parallel.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <numbers>

namespace kiln {

uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double counterUniform(uint64_t seed, uint64_t k) {
  return static_cast<double>(splitmix64(seed ^ splitmix64(k)) >> 11) *
         0x1.0p-53;
}

double initializerValue(const Initializer &init, uint64_t i) {
  switch (init.kind) {
  case Initializer::Kind::Zeros:
    return 0.0;
  case Initializer::Kind::Ones:
    return 1.0;
  case Initializer::Kind::Full:
    return init.a;
  case Initializer::Kind::Uniform:
    return init.a + (init.b - init.a) * counterUniform(init.seed, i);
  case Initializer::Kind::Randn: {
    double u1 = counterUniform(init.seed, 2 * i);
    double u2 = counterUniform(init.seed, 2 * i + 1);
    return std::sqrt(-2.0 * std::log(1.0 - u1)) *
           std::cos(2.0 * std::numbers::pi * u2);
  }
  }
  llvm_unreachable("bad initializer kind");
}

HostTensor makeInitialized(const Initializer &init, DType dtype,
                           llvm::ArrayRef<int64_t> shape) {
  HostTensor t(dtype, shape);
  // Element i depends on i alone (a counter-based generator), so the chunks
  // may run on several threads: L1_35's 1.9 billion inputs took about a
  // minute on one thread.
  ref::parallelFor(t.numel(), 20.0 * static_cast<double>(t.numel()),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t i = begin; i < end; ++i)
                       t.set(i,
                             initializerValue(init, static_cast<uint64_t>(i)));
                   });
  return t;
}

namespace {

std::string declared(const Value &p) {
  return fmt::format("`param {}: {} = zeros`", p.name(), p.type().str());
}

llvm::Error missing(const Graph &g, const Value &p, bool haveFile,
                    llvm::StringRef fileName) {
  SourceLoc loc = g.locate(p.loc());
  if (!haveFile)
    return diag(loc,
                "parameter '{}' has no initialiser and no parameters file "
                "was given; pass one with --params or give it an "
                "initialiser, e.g. {}",
                p.name(), declared(p));
  return diag(loc,
              "parameter '{}' is not in {} and has no initialiser; add it "
              "to the file or give it one, e.g. {}",
              p.name(), fileName.str(), declared(p));
}

llvm::Expected<HostTensor> fromFile(const Graph &g, const Value &p,
                                    const HostTensor &t,
                                    llvm::StringRef fileName) {
  llvm::SmallVector<int64_t, 6> want = p.shape().sizes();
  if (t.dtype != p.dtype() || llvm::ArrayRef<int64_t>(t.shape) != want)
    return diag(g.locate(p.loc()),
                "parameter '{}' in {} is {} but the graph declares {}",
                p.name(), fileName.str(), t.typeStr(), p.type().str());
  return t;
}

llvm::Expected<HostTensor> bindOne(const Graph &g, const Value &p,
                                   const SafetensorsFile *file,
                                   llvm::StringRef fileName) {
  if (!p.shape().isStatic())
    return diag(g.locate(p.loc()),
                "parameter '{}' has shape {}; parameters need static shapes",
                p.name(), p.shape().str());
  if (const HostTensor *t = file ? file->find(p.name()) : nullptr)
    return fromFile(g, p, *t, fileName);
  if (p.init())
    return makeInitialized(*p.init(), p.dtype(), p.shape().sizes());
  return missing(g, p, file != nullptr, fileName);
}

} // namespace

llvm::Expected<BoundParams> bindParams(const Graph &g,
                                       const SafetensorsFile *file,
                                       llvm::StringRef fileName) {
  BoundParams out;
  llvm::StringSet<> used;
  for (const Value *p : g.params()) {
    llvm::Expected<HostTensor> t = bindOne(g, *p, file, fileName);
    if (!t)
      return t.takeError();
    out.values.push_back(std::move(*t));
    used.insert(p->name());
  }
  if (!file)
    return out;
  for (const auto &[name, t] : file->tensors)
    if (!used.contains(name))
      out.warnings.push_back(fmt::format(
          "{}: warning: tensor '{}' ({}) is not a parameter of graph '{}'; "
          "ignored",
          fileName.str(), name, t.typeStr(), g.name()));
  return out;
}

} // namespace kiln
