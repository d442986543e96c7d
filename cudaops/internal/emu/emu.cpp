// The host build of cudaops/kernels/gatejet.cu: the emulation header, then the kernel source
// itself (the very text NVRTC compiles), then the launcher.
#define GJ_EMU 1
#include "cuda_emu.hpp"
#include "../../kernels/gatejet.cu"

#include <stddef.h>

#include <thread>

#include "gjemu.h"

static_assert(sizeof(GjArgs) == sizeof(GjArgsC), "GjArgs layout");
static_assert(offsetof(GjArgs, out) == offsetof(GjArgsC, out), "GjArgs layout");
static_assert(offsetof(GjArgs, floats) == offsetof(GjArgsC, floats), "GjArgs layout");
static_assert(offsetof(GjArgs, i0) == offsetof(GjArgsC, i0), "GjArgs layout");
static_assert(offsetof(GjArgs, tile) == offsetof(GjArgsC, tile), "GjArgs layout");
static_assert(offsetof(GjArgs, s) == offsetof(GjArgsC, s), "GjArgs layout");

thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace gjemu {

thread_local Block* tl_block;

// Sites of the launcher's own barriers (source lines are positive).
enum { kBlockStart = -1, kPoisoned = -2, kBlockEnd = -3 };

static const auto kBarrierTimeout = std::chrono::seconds(120);

void syncthreads(int site) {
  Block* b = tl_block;
  std::unique_lock<std::mutex> lk(b->mu);
  if (b->broken) return;
  if (b->arrived == 0) {
    b->site = site;
  } else if (b->site != site) {
    b->fail("divergent __syncthreads: block " + std::to_string(blockIdx.x) + " thread " +
            std::to_string(threadIdx.x) + " at line " + std::to_string(site) +
            " while others wait at line " + std::to_string(b->site));
    return;
  }
  long long gen = b->gen;
  if (++b->arrived == b->nthreads) {
    b->arrived = 0;
    b->gen++;
    b->cv.notify_all();
    return;
  }
  while (b->gen == gen && !b->broken) {
    if (b->cv.wait_for(lk, kBarrierTimeout) == std::cv_status::timeout && b->gen == gen) {
      b->fail("__syncthreads timed out at line " + std::to_string(site) + " (a thread never arrived)");
    }
  }
}

double* shared_base() { return tl_block->smem.data(); }

double* take(double** p, long long n) {
  Block* b = tl_block;
  double* r = *p;
  *p += n;
  long long used = (long long)(*p - b->smem.data());
  std::lock_guard<std::mutex> lk(b->mu);
  if (used > b->highwater) b->highwater = used;
  if (used > b->smem_doubles) {
    b->fail("shared memory overrun: the kernel carves " + std::to_string(used * 8) +
            " bytes, the launch gave " + std::to_string(b->smem_doubles * 8));
  }
  return r;
}

}  // namespace gjemu

typedef void (*gj_entry)(GjArgs);
struct gj_table_entry {
  const char* name;
  gj_entry fn;
};

#define GJ_TABLE_ROW(name) {"gj_" #name "_f32", gj_##name##_f32}, {"gj_" #name "_f64", gj_##name##_f64},
static const gj_table_entry gj_table[] = {
    GJ_SOFTMAX_JET_KERNELS(GJ_TABLE_ROW) GJ_LOGISTIC_JET_KERNELS(GJ_TABLE_ROW)
        GJ_AXIS_KERNELS(GJ_TABLE_ROW) GJ_ELEMENTWISE_KERNELS(GJ_TABLE_ROW)};
static const int gj_table_len = (int)(sizeof gj_table / sizeof gj_table[0]);

// One launch at a time: each block already uses a thread per CUDA thread.
static std::mutex gj_launch_mu;

static int gj_fail(char* err, int errlen, const std::string& msg) {
  if (errlen > 0) {
    size_t n = msg.size() < (size_t)(errlen - 1) ? msg.size() : (size_t)(errlen - 1);
    memcpy(err, msg.data(), n);
    err[n] = 0;
  }
  return -1;
}

extern "C" int gj_emu_kernel_count(void) { return gj_table_len; }

extern "C" const char* gj_emu_kernel_name(int i) {
  return i >= 0 && i < gj_table_len ? gj_table[i].name : nullptr;
}

extern "C" int gj_emu_launch(const char* name, long long grid, int block, long long smem_bytes,
                             const GjArgsC* args, long long* highwater, char* err, int errlen) {
  gj_entry fn = nullptr;
  for (int i = 0; i < gj_table_len; ++i) {
    if (strcmp(gj_table[i].name, name) == 0) fn = gj_table[i].fn;
  }
  if (!fn) return gj_fail(err, errlen, std::string("unknown kernel ") + name);
  if (block < 1 || block > 1024 || grid < 0 || grid > 0x7fffffffLL || smem_bytes < 0 ||
      smem_bytes > (1LL << 20)) {
    return gj_fail(err, errlen, "bad launch configuration");
  }
  *highwater = 0;
  if (grid == 0) return 0;
  GjArgs a;
  memcpy(&a, args, sizeof a);

  std::lock_guard<std::mutex> launch_lock(gj_launch_mu);
  gjemu::Block blk;
  blk.nthreads = block;
  blk.smem_doubles = (smem_bytes + 7) / 8;
  blk.smem.assign((size_t)(blk.smem_doubles + (1 << 16)), 0.0);  // guard: overruns are reported, not fatal
  const double poison = __longlong_as_double(0x7ff4000000000bad);  // a NaN

  auto worker = [&](int t) {
    gjemu::tl_block = &blk;
    threadIdx = dim3{(unsigned)t, 0, 0};
    blockDim = dim3{(unsigned)block, 1, 1};
    gridDim = dim3{(unsigned)grid, 1, 1};
    for (long long g = 0; g < grid; ++g) {
      blockIdx = dim3{(unsigned)g, 0, 0};
      gjemu::syncthreads(gjemu::kBlockStart);
      if (t == 0) {
        for (auto& x : blk.smem) x = poison;
      }
      gjemu::syncthreads(gjemu::kPoisoned);
      fn(a);
      gjemu::syncthreads(gjemu::kBlockEnd);
    }
  };
  std::vector<std::thread> threads;
  threads.reserve((size_t)block);
  for (int t = 0; t < block; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  *highwater = blk.highwater * 8;
  if (!blk.err.empty()) return gj_fail(err, errlen, blk.err);
  return 0;
}
