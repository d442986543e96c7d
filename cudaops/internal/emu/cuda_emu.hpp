// A small emulation of the CUDA execution model, enough to compile and run gatejet.cu on the
// host: threadIdx/blockIdx/blockDim/gridDim are thread-local, every thread of a block is an OS
// thread, __syncthreads is a barrier that also checks that every thread arrived from the same
// source line (a divergent barrier is an error, not a silent success), and dynamic shared
// memory is one buffer per block, poisoned with NaN before each block and bounds-checked when
// the kernel carves it.
#ifndef GJ_CUDA_EMU_HPP
#define GJ_CUDA_EMU_HPP

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

struct dim3 {
  unsigned int x, y, z;
};

extern thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace gjemu {

struct Block {
  std::mutex mu;
  std::condition_variable cv;
  int nthreads = 0;
  int arrived = 0;
  long long gen = 0;
  int site = 0;
  bool broken = false;  // after an error barriers stop waiting so that the launch can finish
  std::string err;
  std::vector<double> smem;      // smem_doubles usable + a guard area
  long long smem_doubles = 0;    // what the launch asked for
  long long highwater = 0;       // most doubles carved

  void fail(const std::string& msg) {  // with mu held
    if (err.empty()) err = msg;
    broken = true;
    cv.notify_all();
  }
};

extern thread_local Block* tl_block;

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
