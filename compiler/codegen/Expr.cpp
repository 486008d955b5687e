//===- Expr.cpp - CUDA C++ for elementwise nodes at one index -------------===//
#include "codegen/Expr.h"

#include "ops/Families.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/ErrorHandling.h"

#include <fmt/format.h>

namespace kiln {

std::string broadcastIndex(const Shape &operand, const Shape &domain,
                           const std::string &idx) {
  if (operand == domain)
    return idx;
  const size_t r = domain.rank(), off = r - operand.rank();
  // Strides of the domain and of the operand, per domain dim.
  std::vector<int64_t> dstride(r), ostride(r, 0);
  std::vector<bool> live(r, false);
  int64_t ds = 1, os = 1;
  for (size_t k = r; k-- > 0;) {
    dstride[k] = ds;
    ds *= domain[k].size;
    if (k >= off) {
      int64_t size = operand[k - off].size;
      live[k] = size == domain[k].size && size > 1;
      ostride[k] = os;
      os *= size;
    }
  }
  // Runs of consecutive live dims read one contiguous block of the operand.
  std::vector<std::string> terms;
  for (size_t k = 0; k < r;) {
    if (!live[k]) {
      ++k;
      continue;
    }
    size_t e = k;
    while (e + 1 < r && live[e + 1] &&
           ostride[e] == ostride[e + 1] * domain[e + 1].size)
      ++e;
    int64_t span = 1;
    for (size_t j = k; j <= e; ++j)
      span *= domain[j].size;
    std::string t = idx;
    if (dstride[e] != 1)
      t = fmt::format("({} / {})", t, dstride[e]);
    if (k != 0)
      t = fmt::format("({} % {})", t, span);
    if (ostride[e] != 1)
      t = fmt::format("{} * {}", t, ostride[e]);
    terms.push_back(t);
    k = e + 1;
  }
  if (terms.empty())
    return "0";
  std::string s = terms[0];
  for (size_t i = 1; i < terms.size(); ++i)
    s += " + " + terms[i];
  return "(" + s + ")";
}

std::string cudaStorageType(DType t) {
  switch (t) {
  case DType::F16:
    return "kiln::f16";
  case DType::BF16:
    return "kiln::bf16";
  default:
    return "float";
  }
}

std::string roundTo(DType t, const std::string &expr) {
  switch (t) {
  case DType::F16:
    return "kiln::roundF16(" + expr + ")";
  case DType::BF16:
    return "kiln::roundBF16(" + expr + ")";
  default:
    return expr;
  }
}

std::string loadScalar(const Value *v, const std::string &param,
                       const std::string &idx) {
  std::string e = fmt::format("{}[{}]", param, idx);
  return isHalf(v->dtype()) ? "kiln::toFloat(" + e + ")" : e;
}

ExprEmitter::ExprEmitter(Shape domain, int vec, std::string idx,
                         std::function<std::string(const Value *)> param)
    : domain_(std::move(domain)), vec_(vec), idx_(std::move(idx)),
      param_(std::move(param)) {}

std::string copyIntoV(int vec, const std::string &a, bool round) {
  return fmt::format("#pragma unroll\n    for (int l = 0; l < {}; ++l) "
                     "v[l] = {};\n",
                     vec,
                     round ? fmt::format("kiln::rounded({}[l])", a)
                           : fmt::format("{}[l]", a));
}

void ExprEmitter::bind(const Value *v, std::string array) {
  arrays_[v] = std::move(array);
}

void ExprEmitter::bindRounded(const Value *v, std::string array,
                              std::string &out) {
  if (isHalf(v->dtype()))
    out += fmt::format("#pragma unroll\n    for (int l = 0; l < {}; ++l) "
                       "{}[l] = {};\n",
                       vec_, array, roundTo(v->dtype(), array + "[l]"));
  bind(v, std::move(array));
}

std::string ExprEmitter::get(const Value *v, std::string &out) {
  if (v->isLiteral())
    return "";
  auto it = arrays_.find(v);
  if (it != arrays_.end())
    return it->second;
  // A leaf: load it with broadcasting.
  std::string a = fresh(), p = param_(v);
  const Shape &s = v->shape();
  std::string bi =
      s == domain_ && !flat_.empty() ? flat_ : broadcastIndex(s, domain_, idx_);
  // Whether the operand varies along the domain's innermost dim larger than
  // 1 (its dims after that one are 1, so those elements are contiguous).
  bool innerLive = s == domain_;
  size_t inner = domain_.rank();
  while (inner > 0 && domain_[inner - 1].size == 1)
    --inner;
  const size_t off = domain_.rank() - s.rank();
  if (!innerLive && inner > 0 && inner - 1 >= off) {
    const int64_t size = s[inner - 1 - off].size;
    innerLive = size == domain_[inner - 1].size && size > 1;
  }
  if (vec_ == 1)
    out += fmt::format("    float {}[1] = {{{}}};\n", a, loadScalar(v, p, bi));
  else if (innerLive)
    out +=
        fmt::format("    float {}[{}];\n    kiln::loadVec<{}>({} + {}, {});\n",
                    a, vec_, vec_, p, bi, a);
  else
    out += fmt::format("    float {}[{}];\n    {{ const float t = {};\n"
                       "      for (int l = 0; l < {}; ++l) {}[l] = t; }}\n",
                       a, vec_, loadScalar(v, p, bi), vec_, a);
  arrays_[v] = a;
  return a;
}

std::string ExprEmitter::lane(const Value *v, std::string &out,
                              const std::string &l) {
  if (v->isLiteral())
    return cudaFloat(v->literal());
  return get(v, out) + "[" + l + "]";
}

void ExprEmitter::emit(const Node &n, std::string &out) {
  std::vector<std::string> ops;
  // Load operands first so their statements precede the loop.
  for (const Value *v : n.operands())
    if (v)
      get(v, out);
  // An f16 or bf16 op computes in float on operands converted to its dtype
  // (a wider tensor operand is rounded first, as PyTorch casts operands to
  // the common dtype; number literals stay exact) and rounds its result.
  const DType dt = n.result()->dtype();
  for (const Value *v : n.operands())
    if (v) {
      std::string x = lane(v, out, "l");
      ops.push_back(!v->isLiteral() && v->dtype() != dt ? roundTo(dt, x) : x);
    }
  std::string a = fresh();
  out += fmt::format("    float {}[{}]; // {} = {}\n", a, vec_,
                     n.result()->name(), opName(n.op()).str());
  const std::string value = shortMath_ && hasShortForm(n.op())
                                ? cudaShortForm(n, ops[0])
                                : n.info().cuda(n, ops);
  out += fmt::format("#pragma unroll\n    for (int l = 0; l < {}; ++l) "
                     "{}[l] = {};\n",
                     vec_, a, roundTo(dt, value));
  arrays_[n.result()] = a;
}

void ExprEmitter::emitNodes(llvm::ArrayRef<const Node *> nodes,
                            llvm::ArrayRef<const Value *> live,
                            const std::string &fn, std::string &out,
                            std::string &functions) {
  if (nodes.size() <= kOutlineNodes) {
    for (const Node *n : nodes)
      emit(*n, out);
    return;
  }
  // The function: one float argument per leaf (an operand computed before
  // the run), the live values returned in a struct (in registers).
  llvm::SmallPtrSet<const Value *, 16> inside;
  for (const Node *n : nodes)
    inside.insert(n->result());
  ExprEmitter one(domain_, 1, "0", [](const Value *) -> std::string {
    llvm_unreachable("every leaf is bound to an argument");
  });
  one.shortMath(shortMath_);
  std::string args, body, callArgs;
  llvm::SmallPtrSet<const Value *, 8> seen;
  for (const Node *n : nodes)
    for (const Value *v : n->operands()) {
      if (!v || v->isLiteral() || inside.count(v) || !seen.insert(v).second)
        continue;
      const size_t i = seen.size() - 1;
      const std::string in = fmt::format("in{}", i);
      args += fmt::format("{}float a{}", i ? ", " : "", i);
      body += fmt::format("    float {}[1] = {{a{}}};\n", in, i);
      one.bind(v, in);
      callArgs += fmt::format("{}{}", i ? ", " : "", lane(v, out, "l"));
    }
  for (const Node *n : nodes)
    one.emit(*n, body);
  const std::string type = fn + "_out";
  functions += fmt::format("struct {} {{\n  float o[{}];\n}};\n\n"
                           "static __device__ __noinline__ {} {}({}) {{\n"
                           "{}    {} r;\n",
                           type, live.size(), type, fn, args, body, type);
  for (size_t k = 0; k < live.size(); ++k)
    functions +=
        fmt::format("    r.o[{}] = {}[0];\n", k, one.get(live[k], functions));
  functions += "    return r;\n}\n\n";
  std::vector<std::string> results;
  for (size_t k = 0; k < live.size(); ++k) {
    results.push_back(fresh());
    out += fmt::format("    float {}[{}]; // {}\n", results[k], vec_,
                       live[k]->name());
  }
  out += fmt::format("#pragma unroll\n    for (int l = 0; l < {}; ++l) {{\n"
                     "      const {} c = {}({});\n",
                     vec_, type, fn, callArgs);
  for (size_t k = 0; k < live.size(); ++k) {
    out += fmt::format("      {}[l] = c.o[{}];\n", results[k], k);
    arrays_[live[k]] = results[k];
  }
  out += "    }\n";
}

void ExprEmitter::store(const Value *v, const std::string &dstParam,
                        std::string &out) {
  std::string a = get(v, out);
  out += fmt::format("    kiln::storeVec<{}>({} + {}, {});\n", vec_, dstParam,
                     flat_.empty() ? idx_ : flat_, a);
}

} // namespace kiln
