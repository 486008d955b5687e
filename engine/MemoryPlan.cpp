//===- MemoryPlan.cpp - Buffers for intermediates and workspaces ----------===//
#include "Engine.h"

#include <algorithm>

namespace kiln {

/// Assigns every intermediate (a kernel output that is not a graph output)
/// a slot, reusing slots whose values are dead, and allocates the slots.
llvm::Error Executable::planMemory() {
  const Graph &g = *graph_;
  std::vector<int> lastUse(g.values().size(), -1);
  std::vector<bool> isOut(g.values().size(), false);
  for (const Value *v : g.outputs())
    isOut[v->id()] = true;
  for (size_t gi = 0; gi < plan_.groups.size(); ++gi)
    for (const Value *v : plan_.groups[gi].inputs)
      lastUse[v->id()] = static_cast<int>(gi);
  slotOf_.assign(g.values().size(), -1);
  std::vector<bool> slotFree;
  for (size_t gi = 0; gi < plan_.groups.size(); ++gi) {
    for (const Value *v : plan_.groups[gi].outputs) {
      if (isOut[v->id()])
        continue;
      uint64_t bytes = static_cast<uint64_t>(v->shape().numElements()) *
                       dtypeSize(v->dtype());
      int best = -1;
      for (size_t s = 0; s < slotBytes_.size(); ++s)
        if (slotFree[s] && slotBytes_[s] >= bytes &&
            (best < 0 || slotBytes_[s] < slotBytes_[best]))
          best = static_cast<int>(s);
      if (best < 0) {
        for (size_t s = 0; s < slotBytes_.size(); ++s)
          if (slotFree[s] && (best < 0 || slotBytes_[s] > slotBytes_[best]))
            best = static_cast<int>(s);
        if (best >= 0)
          slotBytes_[best] = bytes; // grow the largest free slot
      }
      if (best < 0) {
        best = static_cast<int>(slotBytes_.size());
        slotBytes_.push_back(bytes);
        slotFree.push_back(false);
      }
      slotFree[best] = false;
      slotOf_[v->id()] = best;
    }
    for (const Value *v : plan_.groups[gi].inputs)
      if (lastUse[v->id()] == static_cast<int>(gi) && slotOf_[v->id()] >= 0)
        slotFree[slotOf_[v->id()]] = true;
  }
  for (uint64_t bytes : slotBytes_) {
    llvm::Expected<rt::Buffer> b = device_->alloc(std::max<uint64_t>(bytes, 4));
    if (!b)
      return b.takeError();
    planBytes_ += bytes;
    slots_.push_back(std::move(*b));
  }
  bool zeroed = false;
  for (const EmittedKernel &k : kernels_) {
    std::vector<rt::Buffer> ws;
    for (const KernelParam &p : k.params) {
      if (p.kind != KernelParam::Kind::Workspace)
        continue;
      llvm::Expected<rt::Buffer> b = device_->alloc(p.bytes);
      if (!b)
        return b.takeError();
      planBytes_ += p.bytes;
      // Zeroed once here; the kernel restores the zeros before it ends, so
      // launches need no memset (one driver call fewer on the hot path).
      if (p.zeroed || p.setOnNewParams) {
        if (llvm::Error e = device_->fill32(b->ptr(), p.setOnNewParams ? 1 : 0,
                                            p.bytes / 4, nullptr))
          return e;
        zeroed = true;
      }
      ws.push_back(std::move(*b));
    }
    workspaces_.push_back(std::move(ws));
  }
  // The zeros must land before a launch on any stream.
  return zeroed ? device_->synchronize() : llvm::Error::success();
}

} // namespace kiln
