// A small emulation of the CUDA execution model, enough to compile and run gatejet.cu on the
// host. Every CUDA thread of a block is a fiber (ucontext) with its own stack; the block runs
// on one OS thread, each fiber running until it reaches __syncthreads or returns. A barrier
// completes when every fiber of the block has reached it from the same source line; a fiber
// that returns, or waits at another line, while others wait is reported as a divergent
// barrier instead of passing silently. Between two barriers the fibers run one after another
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

void syncthreads(int site);
double* shared_base();
double* take(double** p, long long n);

}  // namespace gjemu

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __syncthreads() ::gjemu::syncthreads(__LINE__)

inline double __longlong_as_double(long long v) {
  double d;
  memcpy(&d, &v, sizeof d);
  return d;
}

#define GJ_DEV inline
#define GJ_KERNEL extern "C" void
#define GJ_SMEM_DECL double* gj_smem = ::gjemu::shared_base()
#define GJ_TAKE(p, n) ::gjemu::take(&(p), (n))

#endif
