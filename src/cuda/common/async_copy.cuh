// The per-thread asynchronous copy (cp.async, sm_80+): a 16-byte global-to-shared copy that does
// not pass through registers, so a thread can start the loads of the next plane and go on
// computing the current one. Copies issued since the last commit form a group; wait_all blocks
// until every group of this thread has landed (other threads' copies need a barrier on top).
#pragma once

#include "cuda/common/bulk_copy.cuh"

namespace fdstencil::cuda::ptx {

// .cg: cache in L2 only; the tile is read once from shared memory, so L1 would hold it in vain.
__device__ __forceinline__ void copy_async16(void* dst_smem, const void* src_global) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(dst_smem)), "l"(src_global)
               : "memory");
}

// One 4-byte element (.ca: through L1, the only caching 4-byte copies take); `valid` false reads
// nothing and fills zeros (the source size 0), so a copy past the data needs no branch.
__device__ __forceinline__ void copy_async4(void* dst_smem, const void* src_global, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem_addr(dst_smem)), "l"(src_global),
               "r"(valid ? 4 : 0)
               : "memory");
}

__device__ __forceinline__ void copy_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

__device__ __forceinline__ void copy_async_wait_all() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }

// Waits until at most `pending` (0..3) of this thread's most recent groups are still in flight. The
// count is an immediate of the instruction, so a run-time depth picks one of four; `pending` must
// be uniform across the warp for the branch to cost nothing.
__device__ __forceinline__ void copy_async_wait_pending(int pending) {
  switch (pending) {
    case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
  }
}

}  // namespace fdstencil::cuda::ptx
