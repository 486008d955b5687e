//===- Partition.cpp - The fusion partitioner -----------------------------===//
#include "fusion/Partition.h"

#include "ops/Families.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <queue>

namespace kiln {

llvm::StringRef groupKindName(GroupKind k) {
  switch (k) {
  case GroupKind::Pointwise:
    return "pointwise";
  case GroupKind::Reduction:
    return "reduction";
  case GroupKind::GroupNorm:
    return "group_norm";
  case GroupKind::Contraction:
    return "contraction";
  case GroupKind::Convolution:
    return "convolution";
  }
  llvm_unreachable("bad group kind");
}

bool isElementwise(OpKind k) {
  OpFamily f = getOpInfo(k).family;
  return f == OpFamily::Binary || f == OpFamily::Unary;
}

std::vector<const Node *> FusionGroup::nodes() const {
  std::vector<const Node *> all(prologue);
  if (anchor)
    all.push_back(anchor);
  all.insert(all.end(), epilogue.begin(), epilogue.end());
  if (norm)
    all.push_back(norm);
  all.insert(all.end(), normEpilogue.begin(), normEpilogue.end());
  if (tail)
    all.push_back(tail);
  all.insert(all.end(), tailEpilogue.begin(), tailEpilogue.end());
  return all;
}

std::string FusionGroup::nodesText() const {
  std::string s;
  for (const Node *n : nodes())
    s += fmt::format("{}{} = {}", s.empty() ? "" : ", ", n->result()->name(),
                     opName(n->op()).str());
  return s;
}

std::string FusionGroup::describe() const {
  static const char *const prefix[] = {"pw", "red", "gn", "gemm", "conv"};
  std::string s = prefix[static_cast<int>(kind)];
  // At most kNamed ops by name, then how many more (a chain of thousands
  // of fused ops would otherwise name its kernel with all of them).
  constexpr size_t kNamed = 8;
  size_t named = 0, more = 0;
  auto add = [&](const Node *n) {
    if (named++ < kNamed)
      s += "_" + opName(n->op()).str();
    else
      ++more;
  };
  if (anchor && kind != GroupKind::GroupNorm)
    add(anchor);
  for (const auto *ns : {&prologue, &epilogue})
    for (const Node *n : *ns)
      add(n);
  if (norm)
    add(norm);
  for (const Node *n : normEpilogue)
    add(n);
  if (tail)
    add(tail);
  for (const Node *n : tailEpilogue)
    add(n);
  return more ? s + "_and" + std::to_string(more) + "more" : s;
}

namespace {

GroupKind anchorKind(OpKind k) {
  switch (getOpInfo(k).family) {
  case OpFamily::Contraction:
    return GroupKind::Contraction;
  case OpFamily::Convolution:
    return GroupKind::Convolution;
  case OpFamily::Normalization:
    return GroupKind::GroupNorm;
  case OpFamily::Reduction:
    return GroupKind::Reduction;
  case OpFamily::Binary:
  case OpFamily::Unary:
    return GroupKind::Pointwise;
  }
  llvm_unreachable("bad family");
}

/// Whether every tensor node `n` reads and writes is f32, or with `halves`
/// f32, f16 or bf16: the contraction kernels' epilogues compute in f32;
/// the linear's load and store f32 only, an f16 or bf16 convolution's any
/// of them (an f32 one keeps f32 alone, as the linear).
bool floatTensors(const Node &n, bool halves) {
  auto ok = [&](DType t) { return t == DType::F32 || (halves && isHalf(t)); };
  return ok(n.result()->dtype()) &&
         llvm::all_of(n.operands(), [&](const Value *v) {
           return !v || v->isLiteral() || ok(v->dtype());
         });
}

/// Groups under construction: node positions, merged as fusion proceeds.
class Partitioner {
public:
  Partitioner(const Graph &g, const PartitionOptions &opts)
      : g_(g), opts_(opts), users_(g.users()) {
    for (const auto &n : g.nodes())
      index_[n.get()] = static_cast<unsigned>(order_.size()),
      order_.push_back(n.get());
    for (const Value *v : g.outputs())
      isOutput_.insert(v);
    groupOf_.assign(order_.size(), -1);
    inEpilogue_.assign(order_.size(), false);
    inTailEpilogue_.assign(order_.size(), false);
    inNormEpilogue_.assign(order_.size(), false);
  }

  FusionPlan run();

private:
  struct Work {
    GroupKind kind;
    int anchor = -1;                // node position
    std::vector<unsigned> prologue; // node positions (pointwise: all)
    std::vector<unsigned> epilogue;
    int norm = -1; // Contraction: see FusionGroup::norm
    std::vector<unsigned> normEpilogue;
    int tail = -1; // GroupNorm, contraction: see FusionGroup::tail
    std::vector<unsigned> tailEpilogue;
    bool alive = true;
    /// The sum of its elementwise nodes' OpInfo::compileWeight.
    unsigned cost = 0;
    /// Values the group reads from outside it (graph inputs, parameters,
    /// other groups' results): its kernel's input tensors, about.
    llvm::SmallPtrSet<const Value *, 8> reads;
  };

  /// The most tensors one kernel reads. Beyond a few hundred NVRTC's
  /// compile time grows steeply (a chain adding 2000 inputs took 92 s), and
  /// near 4000 the kernel's parameters overflow their 32 KiB.
  static constexpr size_t kMaxReads = 256;
  /// The most elementwise work one kernel holds, in OpInfo::compileWeight
  /// units (an add is 1). NVRTC's time grows faster than the kernel: a
  /// chain cycling add, mul and sigmoid (2 units a node on average) took
  /// 0.19 s of CPU at 250 nodes, 0.47 s at 500, 1.5 s at 1000 and 6.2 s at
  /// 2000 (sm_90). Cutting at 1000 units keeps each kernel near 0.5 s and
  /// the total linear in the chain's length.
  static constexpr unsigned kMaxCost = 1000;
  unsigned nodeCost(unsigned pos) const {
    const Node *n = order_[pos];
    return isElementwise(n->op()) ? n->info().compileWeight : 0;
  }
  /// The operands of node `pos` that group `gi` would newly read.
  llvm::SmallVector<const Value *, 3> newReads(int gi, unsigned pos) const {
    llvm::SmallVector<const Value *, 3> out;
    for (const Value *v : order_[pos]->operands())
      if (v && !v->isLiteral() && producerGroup(v) != gi &&
          !groups_[gi].reads.count(v) && !llvm::is_contained(out, v))
        out.push_back(v);
    return out;
  }
  /// Whether node `pos` may join group `gi` within kMaxReads and kMaxCost.
  bool fits(int gi, unsigned pos) const {
    return groups_[gi].reads.size() + newReads(gi, pos).size() <= kMaxReads &&
           groups_[gi].cost + nodeCost(pos) <= kMaxCost;
  }
  /// Group `gi` takes node `pos`: its reads, its cost, its group.
  void join(int gi, unsigned pos) {
    for (const Value *v : newReads(gi, pos))
      groups_[gi].reads.insert(v);
    groups_[gi].cost += nodeCost(pos);
    groupOf_[pos] = gi;
  }
  /// How many values groups a and b together read.
  size_t mergedReads(int a, int b) const {
    size_t n = groups_[a].reads.size();
    for (const Value *v : groups_[b].reads)
      n += !groups_[a].reads.count(v);
    return n;
  }
  /// Whether groups a and b together read at most kMaxReads values and hold
  /// at most kMaxCost.
  bool mergeFits(int a, int b) const {
    return mergedReads(a, b) <= kMaxReads &&
           groups_[a].cost + groups_[b].cost <= kMaxCost;
  }
  /// Pointwise group `from` joins pointwise group `into`.
  void mergePointwise(int into, int from);

  int producerGroup(const Value *v) const {
    return v && v->def() ? groupOf_[index_.lookup(v->def())] : -1;
  }
  int newGroup(GroupKind kind) {
    Work w;
    w.kind = kind;
    groups_.push_back(std::move(w));
    return static_cast<int>(groups_.size()) - 1;
  }
  /// Groups whose results group `gi` reads.
  llvm::SmallVector<int, 4> deps(int gi) const;
  /// Whether group `to` (transitively) reads a result of group `from`.
  bool reaches(int from, int to) const;
  void addPointwise(unsigned pos);
  bool tryEpilogue(unsigned pos);
  bool tryContractionEpilogue(unsigned pos);
  bool feedsNorm(const Value *v);
  bool tryNorm(unsigned pos);
  bool tryTail(unsigned pos);
  bool tryChannelTail(unsigned pos, int gi);
  bool tryTailEpilogue(unsigned pos);
  /// Whether no operand of node `pos` comes from a group (other than gi)
  /// that depends on group gi.
  bool operandsIndependent(unsigned pos, int gi) const;
  /// Whether v (defined in group w) is w's anchor result or an epilogue
  /// value.
  bool isAnchorOrEpilogue(const Work &w, const Value *v) const {
    return v->def() == order_[w.anchor] || inEpilogue_[index_.lookup(v->def())];
  }
  /// Whether v (defined in contraction group w) is a value of its last
  /// stage so far: the norm's result or a normEpilogue value once it has a
  /// norm, else the anchor's result or an epilogue value.
  bool inLastStage(const Work &w, const Value *v) const {
    if (w.norm < 0)
      return isAnchorOrEpilogue(w, v);
    const unsigned p = index_.lookup(v->def());
    return static_cast<int>(p) == w.norm || inNormEpilogue_[p];
  }
  void fusePrologues();
  void fuseSiblings();
  std::vector<int> groupOrder() const;
  FusionGroup finish(int gi) const;

  const Graph &g_;
  const PartitionOptions &opts_;
  std::vector<llvm::SmallVector<Node *, 2>> users_;
  llvm::DenseMap<const Value *, bool> feedsNorm_;
  llvm::DenseMap<const Node *, unsigned> index_;
  std::vector<const Node *> order_;
  llvm::SmallPtrSet<const Value *, 4> isOutput_;
  std::vector<int> groupOf_;
  // Per node position: whether it is in its group's epilogue or tail
  // epilogue (kept beside the lists so that membership is O(1)).
  std::vector<bool> inEpilogue_, inTailEpilogue_, inNormEpilogue_;
  std::vector<Work> groups_;
};

llvm::SmallVector<int, 4> Partitioner::deps(int gi) const {
  llvm::SmallVector<int, 4> out;
  llvm::SmallDenseSet<int, 8> seen;
  auto scan = [&](unsigned pos) {
    for (const Value *v : order_[pos]->operands()) {
      int p = producerGroup(v);
      if (p >= 0 && p != gi && seen.insert(p).second)
        out.push_back(p);
    }
  };
  const Work &w = groups_[gi];
  for (unsigned p : w.prologue)
    scan(p);
  if (w.anchor >= 0)
    scan(w.anchor);
  for (unsigned p : w.epilogue)
    scan(p);
  if (w.norm >= 0)
    scan(w.norm);
  for (unsigned p : w.normEpilogue)
    scan(p);
  if (w.tail >= 0)
    scan(w.tail);
  for (unsigned p : w.tailEpilogue)
    scan(p);
  return out;
}

bool Partitioner::reaches(int from, int to) const {
  std::vector<int> stack{to};
  std::vector<bool> seen(groups_.size());
  while (!stack.empty()) {
    int gi = stack.back();
    stack.pop_back();
    if (gi == from)
      return true;
    if (seen[gi])
      continue;
    seen[gi] = true;
    for (int d : deps(gi))
      stack.push_back(d);
  }
  return false;
}

/// An elementwise node joins the epilogue of the group_norm or reduction
/// group producing one of its operands when it runs over that anchor's
/// result shape and every other operand is either from the same group or
/// from a group that does not depend on it.
bool Partitioner::tryEpilogue(unsigned pos) {
  const Node *n = order_[pos];
  for (const Value *v : n->operands()) {
    int gi = producerGroup(v);
    if (gi < 0)
      continue;
    Work &w = groups_[gi];
    if (w.kind != GroupKind::GroupNorm && w.kind != GroupKind::Reduction)
      continue;
    if (w.tail >= 0) // the epilogue is written before the tail is known
      continue;
    if (n->result()->shape() != order_[w.anchor]->result()->shape())
      continue;
    // The operand must be the anchor's result or an epilogue value.
    if (!isAnchorOrEpilogue(w, v))
      continue;
    if (!operandsIndependent(pos, gi) || !fits(gi, pos))
      continue;
    w.epilogue.push_back(pos);
    inEpilogue_[pos] = true;
    join(gi, pos);
    return true;
  }
  return false;
}

/// Whether a group_norm reads v, directly or through elementwise nodes.
/// Memoised: a graph of shared values would otherwise walk each path.
bool Partitioner::feedsNorm(const Value *v) {
  auto [it, added] = feedsNorm_.try_emplace(v, false);
  if (!added)
    return it->second;
  const bool feeds = llvm::any_of(users_[v->id()], [&](const Node *u) {
    return u->op() == OpKind::GroupNorm ||
           (isElementwise(u->op()) && feedsNorm(u->result()));
  });
  feedsNorm_[v] = feeds;
  return feeds;
}

/// An elementwise node over a contraction's result shape joins the
/// contraction's group when its kernel takes an epilogue: before a
/// group_norm joined, reading the anchor's result or epilogue values (and
/// values from outside); after, reading the normalised value or the nodes
/// after it (and values from outside), never the values before the norm.
bool Partitioner::tryContractionEpilogue(unsigned pos) {
  const Node *n = order_[pos];
  for (const Value *v : n->operands()) {
    int gi = producerGroup(v);
    if (gi < 0 || (groups_[gi].kind != GroupKind::Contraction &&
                   groups_[gi].kind != GroupKind::Convolution))
      continue;
    Work &w = groups_[gi];
    const Node &anchor = *order_[w.anchor];
    if (!opts_.contractionEpilogue ||
        !opts_.contractionEpilogue(anchor, nullptr))
      continue;
    if (w.kind == GroupKind::Convolution && feedsNorm(n->result()))
      continue;
    if (w.tail >= 0) // the tail reads the last stage's values
      continue;
    if (n->result()->shape() != anchor.result()->shape() ||
        !floatTensors(*n, w.kind == GroupKind::Convolution &&
                              isHalf(anchor.result()->dtype())))
      continue;
    // Every operand from the group must come from the current stage.
    bool ok = llvm::all_of(n->operands(), [&](const Value *o) {
      if (!o || producerGroup(o) != gi)
        return true;
      return inLastStage(w, o);
    });
    if (!ok || !operandsIndependent(pos, gi) || !fits(gi, pos))
      continue;
    if (w.norm < 0) {
      w.epilogue.push_back(pos);
      inEpilogue_[pos] = true;
    } else {
      w.normEpilogue.push_back(pos);
      inNormEpilogue_[pos] = true;
    }
    join(gi, pos);
    return true;
  }
  return false;
}

/// A group_norm of a contraction's result or epilogue value joins the
/// contraction's group when its kernel can normalise in the epilogue.
bool Partitioner::tryNorm(unsigned pos) {
  const Node *n = order_[pos];
  if (n->op() != OpKind::GroupNorm)
    return false;
  const Value *x = n->operand(0);
  int gi = producerGroup(x);
  if (gi < 0 || groups_[gi].kind != GroupKind::Contraction ||
      groups_[gi].norm >= 0 || groups_[gi].tail >= 0)
    return false;
  Work &w = groups_[gi];
  if (!isAnchorOrEpilogue(w, x) || !floatTensors(*n, false) ||
      !opts_.contractionEpilogue ||
      !opts_.contractionEpilogue(*order_[w.anchor], n))
    return false;
  if (!operandsIndependent(pos, gi) || !fits(gi, pos))
    return false;
  w.norm = static_cast<int>(pos);
  join(gi, pos);
  return true;
}

bool Partitioner::operandsIndependent(unsigned pos, int gi) const {
  return llvm::none_of(order_[pos]->operands(), [&](const Value *o) {
    int og = producerGroup(o);
    return og >= 0 && og != gi && reaches(gi, og);
  });
}

/// A reduction becomes the tail of the group computing its operand:
///  - a min or max of a GroupNorm group's anchor or epilogue value, over
///    every dim but the first (the batch);
///  - a min, max, sum, mean or logsumexp of a contraction group's last stage
///    (the values after its norm, or without one the anchor and epilogue
///    values), when its kernel takes an epilogue, over the last dims (at
///    least the last: each key gathers whole rows of the tiles);
///  - the same of a convolution's anchor or epilogue value over its
///    channels (dim 1 of NCHW) where the kernel's tiles hold every channel
///    (contractionEpilogue given the reduction says so).
bool Partitioner::tryTail(unsigned pos) {
  const Node *n = order_[pos];
  const bool minMax = n->op() == OpKind::Min || n->op() == OpKind::Max;
  if (!minMax && n->op() != OpKind::Sum && n->op() != OpKind::Mean &&
      n->op() != OpKind::LogSumExp)
    return false;
  const Value *in = n->operand(0);
  int gi = producerGroup(in);
  if (gi < 0 || groups_[gi].tail >= 0)
    return false;
  Work &w = groups_[gi];
  if (w.kind == GroupKind::Convolution)
    return tryChannelTail(pos, gi);
  const bool contraction = w.kind == GroupKind::Contraction;
  if (!contraction && (w.kind != GroupKind::GroupNorm || !minMax))
    return false;
  if (contraction) {
    if (!opts_.contractionEpilogue ||
        !opts_.contractionEpilogue(*order_[w.anchor], nullptr) ||
        !floatTensors(*n, false))
      return false;
    if (!inLastStage(w, in))
      return false;
  } else if (!isAnchorOrEpilogue(w, in)) {
    return false;
  }
  llvm::Expected<llvm::SmallVector<int64_t, 4>> dims = reducedDims(*n);
  if (!dims) {
    llvm::consumeError(dims.takeError());
    return false;
  }
  // The reduced dims must be the last ones: from 1 (GroupNorm), from any
  // dim (contraction).
  const int64_t rank = static_cast<int64_t>(in->shape().rank());
  const int64_t first =
      contraction ? rank - static_cast<int64_t>(dims->size()) : 1;
  if (dims->empty() || first < 0 ||
      static_cast<int64_t>(dims->size()) != rank - first)
    return false;
  for (int64_t k = first; k < rank; ++k)
    if (!llvm::is_contained(*dims, k))
      return false;
  if (!fits(gi, pos))
    return false;
  w.tail = static_cast<int>(pos);
  join(gi, pos);
  return true;
}

/// A reduction over the channels (dim 1) of a convolution group's anchor or
/// epilogue value becomes its tail.
bool Partitioner::tryChannelTail(unsigned pos, int gi) {
  const Node *n = order_[pos];
  Work &w = groups_[gi];
  const Value *in = n->operand(0);
  if (!isAnchorOrEpilogue(w, in) || in->shape().rank() != 4 ||
      !floatTensors(*n, false) || !opts_.contractionEpilogue ||
      !opts_.contractionEpilogue(*order_[w.anchor], n))
    return false;
  llvm::Expected<llvm::SmallVector<int64_t, 4>> dims = reducedDims(*n);
  if (!dims) {
    llvm::consumeError(dims.takeError());
    return false;
  }
  if (dims->size() != 1 || (*dims)[0] != 1 || !fits(gi, pos))
    return false;
  w.tail = static_cast<int>(pos);
  join(gi, pos);
  return true;
}

/// An elementwise node reading a tail's result (or a node after it) joins
/// the tail epilogue when all of its other operands come from outside the
/// group (the GroupNorm values are gone by then) and it runs over the same
/// shape as the tail epilogue so far.
bool Partitioner::tryTailEpilogue(unsigned pos) {
  const Node *n = order_[pos];
  for (const Value *v : n->operands()) {
    int gi = producerGroup(v);
    if (gi < 0 || groups_[gi].tail < 0)
      continue;
    Work &w = groups_[gi];
    auto inTail = [&](const Value *o) {
      if (!o || !o->def() || producerGroup(o) != gi)
        return false;
      unsigned p = index_.lookup(o->def());
      return static_cast<int>(p) == w.tail || inTailEpilogue_[p];
    };
    if (!inTail(v))
      continue;
    bool ok = llvm::all_of(n->operands(), [&](const Value *o) {
      return !o || inTail(o) || producerGroup(o) != gi;
    });
    if (!ok || !operandsIndependent(pos, gi) || !fits(gi, pos))
      continue;
    if (!w.tailEpilogue.empty() &&
        order_[w.tailEpilogue.front()]->result()->shape() !=
            n->result()->shape())
      continue;
    // A convolution's tail epilogue runs per output pixel, over the tail's
    // own shape.
    if (w.kind == GroupKind::Convolution &&
        n->result()->shape() != order_[w.tail]->result()->shape())
      continue;
    w.tailEpilogue.push_back(pos);
    inTailEpilogue_[pos] = true;
    join(gi, pos);
    return true;
  }
  return false;
}

/// Joins (and merges) the pointwise groups of the node's operands that have
/// its result shape, unless that would make a group depend on itself.
void Partitioner::addPointwise(unsigned pos) {
  const Node *n = order_[pos];
  llvm::SmallVector<int, 2> cands;
  for (const Value *v : n->operands()) {
    int gi = producerGroup(v);
    if (gi >= 0 && groups_[gi].kind == GroupKind::Pointwise &&
        v->shape() == n->result()->shape() && !llvm::is_contained(cands, gi))
      cands.push_back(gi);
  }
  // A candidate that another candidate reaches through a third group
  // cannot merge with it; keep the first and those independent of it.
  int target = -1;
  for (int c : cands) {
    if (target < 0) {
      target = c;
      continue;
    }
    if (reaches(target, c) || reaches(c, target) || !mergeFits(target, c))
      continue;
    mergePointwise(target, c);
  }
  if (target < 0 || !fits(target, pos))
    target = newGroup(GroupKind::Pointwise);
  // The node itself: every other operand group must not depend on target.
  for (const Value *v : n->operands()) {
    int og = producerGroup(v);
    if (og >= 0 && og != target && reaches(target, og)) {
      target = newGroup(GroupKind::Pointwise);
      break;
    }
  }
  // Nodes arrive in order, so `pos` follows every node already in a group
  // and the prologue stays sorted (merges above keep it so too).
  groups_[target].prologue.push_back(pos);
  join(target, pos);
}

void Partitioner::mergePointwise(int into, int from) {
  Work &f = groups_[from], &t = groups_[into];
  for (unsigned p : f.prologue)
    groupOf_[p] = into;
  for (const Value *v : f.reads)
    t.reads.insert(v);
  t.cost += f.cost;
  const auto mid = static_cast<std::ptrdiff_t>(t.prologue.size());
  llvm::append_range(t.prologue, f.prologue);
  std::inplace_merge(t.prologue.begin(), t.prologue.begin() + mid,
                     t.prologue.end());
  f.prologue.clear();
  f.alive = false;
}

/// A pointwise group whose only result leaving it is the main input of a
/// group_norm or reduction, read by nothing else, becomes its prologue.
void Partitioner::fusePrologues() {
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    Work &w = groups_[gi];
    if (!w.alive ||
        (w.kind != GroupKind::GroupNorm && w.kind != GroupKind::Reduction))
      continue;
    const Value *in = order_[w.anchor]->operand(0);
    int pi = producerGroup(in);
    if (pi < 0 || groups_[pi].kind != GroupKind::Pointwise ||
        isOutput_.count(in) || users_[in->id()].size() != 1)
      continue;
    // No other value of the pointwise group may be read outside it.
    bool escapes = false;
    for (unsigned p : groups_[pi].prologue) {
      const Value *r = order_[p]->result();
      if (r == in)
        continue;
      if (isOutput_.count(r))
        escapes = true;
      for (const Node *u : users_[r->id()])
        if (groupOf_[index_.lookup(u)] != pi)
          escapes = true;
    }
    if (escapes || !mergeFits(static_cast<int>(gi), pi))
      continue;
    for (const Value *v : groups_[pi].reads)
      w.reads.insert(v);
    w.cost += groups_[pi].cost;
    for (unsigned p : groups_[pi].prologue)
      groupOf_[p] = static_cast<int>(gi);
    w.prologue = std::move(groups_[pi].prologue);
    groups_[pi].alive = false;
  }
}

/// Horizontal fusion: a pointwise group joins an earlier pointwise group of
/// the same result shape that reads a tensor it reads, so that siblings
/// (3000 `y_i = add(x, i)`) share kernels instead of each costing a launch
/// and a read of x. Two groups merge only at the same depth (the longest
/// chain of groups feeding each): then neither reads the other's results,
/// even through a third group, and the merged group keeps that depth, so
/// every depth stays valid while the pass runs and the plan keeps a
/// topological order. The merged kernel is bounded like any other: at most
/// kMaxReads tensors read and written together (its parameters), kMaxCost.
void Partitioner::fuseSiblings() {
  const std::vector<int> order = groupOrder();
  std::vector<unsigned> depth(groups_.size(), 0), outs(groups_.size(), 0);
  for (int gi : order) {
    for (int d : deps(gi))
      depth[gi] = std::max(depth[gi], depth[d] + 1);
    for (unsigned p : groups_[gi].prologue) {
      const Value *r = order_[p]->result();
      bool used = isOutput_.count(r) != 0;
      for (const Node *u : users_[r->id()])
        used |= groupOf_[index_.lookup(u)] != gi;
      outs[gi] += used;
    }
  }
  auto domain = [&](int gi) -> const Shape & {
    return order_[groups_[gi].prologue.front()]->result()->shape();
  };
  // The pointwise groups reading each tensor, newest last: the groups that
  // a later sibling may join.
  llvm::DenseMap<const Value *, llvm::SmallVector<int, 2>> hosts;
  constexpr size_t kTries = 16; // hosts tried per tensor, newest first
  for (int gi : order) {
    const Work &w = groups_[gi];
    if (w.kind != GroupKind::Pointwise || w.prologue.empty())
      continue;
    // The tensors it reads, in node order (deterministic, unlike `reads`).
    llvm::SmallVector<const Value *, 8> reads;
    llvm::SmallPtrSet<const Value *, 8> seen;
    for (unsigned p : w.prologue)
      for (const Value *v : order_[p]->operands())
        if (v && !v->isLiteral() && producerGroup(v) != gi &&
            seen.insert(v).second)
          reads.push_back(v);
    int into = -1;
    for (const Value *v : reads) {
      auto it = hosts.find(v);
      if (it == hosts.end())
        continue;
      size_t tried = 0;
      for (int h : llvm::reverse(it->second)) {
        if (tried++ == kTries)
          break;
        if (depth[h] == depth[gi] && domain(h) == domain(gi) &&
            mergedReads(h, gi) + outs[h] + outs[gi] <= kMaxReads &&
            groups_[h].cost + w.cost <= kMaxCost) {
          into = h;
          break;
        }
      }
      if (into >= 0)
        break;
    }
    const int host = into >= 0 ? into : gi;
    if (into >= 0) {
      mergePointwise(into, gi);
      outs[into] += outs[gi];
    }
    for (const Value *v : reads) {
      llvm::SmallVector<int, 2> &hs = hosts[v];
      if (hs.empty() || hs.back() != host)
        hs.push_back(host);
    }
  }
}

/// Live groups in dependency order; of the groups whose inputs are ready,
/// the one with the earliest node goes first.
std::vector<int> Partitioner::groupOrder() const {
  auto firstNode = [&](int gi) {
    const Work &w = groups_[gi];
    unsigned m = ~0u;
    for (unsigned p : w.prologue)
      m = std::min(m, p);
    if (w.anchor >= 0)
      m = std::min(m, static_cast<unsigned>(w.anchor));
    for (unsigned p : w.epilogue)
      m = std::min(m, p);
    return m;
  };
  // Kahn's algorithm with the ready groups in a min-heap on first node.
  std::vector<unsigned> waitingOn(groups_.size(), 0);
  std::vector<llvm::SmallVector<int, 2>> readers(groups_.size());
  using Ready = std::pair<unsigned, int>; // (first node, group)
  std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready;
  size_t live = 0;
  for (size_t i = 0; i < groups_.size(); ++i) {
    if (!groups_[i].alive)
      continue;
    const int gi = static_cast<int>(i);
    ++live;
    const llvm::SmallVector<int, 4> in = deps(gi);
    for (int d : in)
      readers[d].push_back(gi);
    waitingOn[i] = static_cast<unsigned>(in.size());
    if (waitingOn[i] == 0)
      ready.push({firstNode(gi), gi});
  }
  std::vector<int> out;
  while (!ready.empty()) {
    const int gi = ready.top().second;
    ready.pop();
    out.push_back(gi);
    for (int r : readers[gi])
      if (--waitingOn[r] == 0)
        ready.push({firstNode(r), r});
  }
  assert(out.size() == live && "fusion groups depend on each other in a cycle");
  (void)live;
  return out;
}

FusionGroup Partitioner::finish(int gi) const {
  const Work &w = groups_[gi];
  FusionGroup fg;
  fg.kind = w.kind;
  for (unsigned p : w.prologue)
    fg.prologue.push_back(order_[p]);
  if (w.anchor >= 0)
    fg.anchor = order_[w.anchor];
  for (unsigned p : w.epilogue)
    fg.epilogue.push_back(order_[p]);
  if (w.norm >= 0)
    fg.norm = order_[w.norm];
  for (unsigned p : w.normEpilogue)
    fg.normEpilogue.push_back(order_[p]);
  if (w.tail >= 0)
    fg.tail = order_[w.tail];
  for (unsigned p : w.tailEpilogue)
    fg.tailEpilogue.push_back(order_[p]);
  llvm::SmallPtrSet<const Value *, 8> seenInput;
  for (const Node *n : fg.nodes()) {
    for (const Value *v : n->operands())
      if (v && !v->isLiteral() && producerGroup(v) != gi &&
          seenInput.insert(v).second)
        fg.inputs.push_back(v);
    const Value *r = n->result();
    bool used = isOutput_.count(r) != 0;
    for (const Node *u : users_[r->id()])
      if (groupOf_[index_.lookup(u)] != gi)
        used = true;
    if (used)
      fg.outputs.push_back(r);
  }
  return fg;
}

FusionPlan Partitioner::run() {
  for (unsigned pos = 0; pos < order_.size(); ++pos) {
    const Node *n = order_[pos];
    if (!isElementwise(n->op())) {
      if (tryTail(pos) || tryNorm(pos))
        continue;
      int gi = newGroup(anchorKind(n->op()));
      groups_[gi].anchor = static_cast<int>(pos);
      join(gi, pos);
      continue;
    }
    if (!tryTailEpilogue(pos) && !tryEpilogue(pos) &&
        !tryContractionEpilogue(pos))
      addPointwise(pos);
  }
  fusePrologues();
  fuseSiblings();
  FusionPlan plan;
  for (int gi : groupOrder()) {
    FusionGroup fg = finish(gi);
    const bool none = llvm::all_of(fg.outputs, [](const Value *v) {
      return v->shape().numElements() == 0;
    });
    (none ? plan.empty : plan.groups).push_back(std::move(fg));
  }
  return plan;
}

} // namespace

FusionPlan partitionGraph(const Graph &g, const PartitionOptions &opts) {
  return Partitioner(g, opts).run();
}

} // namespace kiln
