// A small emulation of the CUDA execution model, enough to compile and run gatejet.cu on the
// host. Every CUDA thread of a block is a fiber with its own stack; the block runs on one OS
// thread, each fiber running until it reaches __syncthreads or returns. A barrier completes
// when every fiber of the block has reached the same barrier by the same call path: the site of
// a barrier is its textual occurrence (__COUNTER__, so two barriers of one macro expansion
// differ) together with the return addresses of the calls that led to it (so a helper's
// barrier reached from two call sites differs). A fiber that returns, or waits at another
// site, while others wait is reported as a divergent barrier instead of passing silently.
// __syncwarp is the same for the 32 threads of a warp (32w … 32w + 31): a warp's barrier
// completes when all its lanes wait at the same site, whatever the other warps do. Between two barriers the fibers run one after another
// in a chosen order (forward, reverse or shuffled), so a missing barrier shows up as results
// that change with the order. Dynamic shared memory is one buffer per block, poisoned with NaN
// before each block and bounds-checked when the kernel carves it.
#ifndef GJ_CUDA_EMU_HPP
#define GJ_CUDA_EMU_HPP

#include <math.h>
#include <stdint.h>
#include <string.h>


struct dim3 {
  unsigned int x, y, z;
};

extern thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace gjemu {

// returns_twice: GCC does not duplicate a block that ends in such a call (jump threading,
// tail duplication), so each textual barrier keeps one call instruction, and threads that
// took different branches before a barrier do not reach it through different copies of it.
// Without it GCC 12 at -O2 splits gj_softmax_gate's barriers into copies and the site keys of
// correct kernels differ. If a compiler ever duplicates one anyway, the result is a loud
// "by another call path" failure, never a silent pass.
__attribute__((returns_twice)) void syncthreads(int line, int id);
// __syncwarp(): a barrier of the calling thread's warp (threads 32w … 32w + 31 of the block),
// with the same site keys; every lane of the warp must reach the same one.
__attribute__((returns_twice)) void syncwarp(int line, int id);
double* shared_base();
unsigned dynamic_smem_bytes();  // the launch's dynamic shared memory
double* take(double** p, long long n);

}  // namespace gjemu

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __syncthreads() ::gjemu::syncthreads(__LINE__, __COUNTER__)
#define __syncwarp() ::gjemu::syncwarp(__LINE__, __COUNTER__)

inline double __longlong_as_double(long long v) {
  double d;
  memcpy(&d, &v, sizeof d);
  return d;
}

#define GJ_DEV inline
#define GJ_KERNEL extern "C" void
#define GJ_WARP_KERNEL extern "C" void
#define GJ_SMEM_DECL double* gj_smem = ::gjemu::shared_base()
#define GJ_TAKE(p, n) ::gjemu::take(&(p), (n))

#endif
