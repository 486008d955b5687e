//===- bulk.cuh - Bulk copies from global to shared memory ------*- CUDA
//-*-===//
//
// Hopper's copy engine (cp.async.bulk, sm_90) moves a contiguous run of
// bytes from global into shared memory without registers, and reports its
// arrival on a shared-memory barrier (mbarrier) as a transaction count. A
// kernel can so keep far more bytes in flight than its registers hold.
//
// Protocol for one barrier: one thread arms a phase with the bytes it will
// copy (arm), then issues the copies (copyIn); every thread that reads the
// data waits on the phase's parity (wait). Sizes and addresses: multiples of
// 16 bytes. Shared memory that threads wrote with ordinary stores must be
// fenced (fenceAsync) before a copy overwrites it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BULK_CUH
#define KILN_BULK_CUH

#include "kiln/common.cuh"

namespace kiln {

__device__ __forceinline__ unsigned sharedAddr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Before any thread uses the barrier: one thread initialises it, then the
/// block synchronises.
__device__ __forceinline__ void barrierInit(u64 *bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sharedAddr(bar)),
               "r"(arrivals)
               : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// Arrives once and expects `bytes` of copies in the current phase.
__device__ __forceinline__ void barrierArm(u64 *bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                   sharedAddr(bar)),
               "r"(bytes)
               : "memory");
}

/// Waits until the phase with this parity (0, 1, 0, ...) has completed.
__device__ __forceinline__ void barrierWait(u64 *bar, unsigned parity) {
  const unsigned a = sharedAddr(bar);
  unsigned done;
  do {
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(a), "r"(parity)
                 : "memory");
  } while (!done);
}

/// Copies `bytes` from global `src` to shared `dst`; completes on `bar`.
__device__ __forceinline__ void copyIn(float *dst, const float *src,
                                       unsigned bytes, u64 *bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
               "bytes [%0], [%1], %2, [%3];" ::"r"(sharedAddr(dst)),
               "l"(src), "r"(bytes), "r"(sharedAddr(bar))
               : "memory");
}

/// Orders this thread's ordinary shared-memory stores before later bulk
/// copies into the same place.
__device__ __forceinline__ void fenceAsync() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

} // namespace kiln

#endif
