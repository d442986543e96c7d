// The host build of cudaops/kernels/gatejet.cu: the emulation header, then the kernel source
// itself (the very text NVRTC compiles), then the fiber scheduler that runs a launch.
#define GJ_EMU 1
#include "cuda_emu.hpp"
#include "kernel_entries.h"  // GJ_ENTRIES, from the kernel table (generated)
#include "../../kernels/gatejet.cu"  // rebuilt when it changes: see kernelsrc.go

#include <stddef.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gjemu.h"

// Under AddressSanitizer (CGO_CXXFLAGS=-fsanitize=address, see .ci/cuda-checks) every switch
// between the scheduler and a fiber is announced to ASan, and a pooled fiber stack is unpoisoned
// before a fiber starts on it: the frames of the previous fiber there never returned, so their
// redzones would otherwise still be poisoned.
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define GJ_ASAN 1
#endif

static_assert(sizeof(GjArgs) == sizeof(GjArgsC), "GjArgs layout");
static_assert(offsetof(GjArgs, out) == offsetof(GjArgsC, out), "GjArgs layout");
static_assert(offsetof(GjArgs, floats) == offsetof(GjArgsC, floats), "GjArgs layout");
static_assert(offsetof(GjArgs, i0) == offsetof(GjArgsC, i0), "GjArgs layout");
static_assert(offsetof(GjArgs, tile) == offsetof(GjArgsC, tile), "GjArgs layout");
static_assert(offsetof(GjArgs, s) == offsetof(GjArgsC, s), "GjArgs layout");
static_assert(offsetof(GjArgs, in4) == offsetof(GjArgsC, in4), "GjArgs layout");

// The CUDA built-in variables. The scheduler sets them before it resumes a fiber; every fiber
// of a launch runs on the launching OS thread.
thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

// ------------------------------------------------------------------ context switching
// On x86-64 a fiber switch saves the callee-saved registers, MXCSR and the x87 control word on
// the current stack and loads the other stack: no system call (swapcontext would make two, to
// save and restore the signal mask, at every switch). Elsewhere, ucontext.
#if defined(__x86_64__)
extern "C" void gj_ctx_switch(void** save_sp, void* next_sp);
asm(R"(
  .text
  .p2align 4
  .globl gj_ctx_switch
  .hidden gj_ctx_switch
  .type gj_ctx_switch,@function
gj_ctx_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size gj_ctx_switch,.-gj_ctx_switch
)");
#define GJ_FAST_SWITCH 1
#endif

namespace gjemu {

struct Fiber {
  void* sp = nullptr;  // saved stack pointer (fast switch)
  ucontext_t uc;       // saved context (fallback)
};

// A fiber stack with an inaccessible guard page below it, so that an overflow faults instead of
// corrupting memory. Stacks are pooled across launches.
struct Stack {
  char* base = nullptr;
  size_t bytes = 0;
};
static const size_t kFiberStack = 128 << 10;
static std::vector<Stack> g_stacks;

static bool ensure_stacks(int n) {
  long page = sysconf(_SC_PAGESIZE);
  while ((int)g_stacks.size() < n) {
    size_t bytes = kFiberStack + (size_t)page;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    mprotect(p, (size_t)page, PROT_NONE);
    g_stacks.push_back(Stack{(char*)p, bytes});
  }
  return true;
}

// Fiber states kept in Block::state.
enum { kRunning = 0, kReturned = -1, kKilled = -2, kWaiting = 1, kWarpWaiting = 2 };

// Where a waiting fiber waits: the barrier's source line (for messages) and its site key, a hash
// of the textual barrier id and of the return addresses on the fiber's stack.
struct Site {
  int line = 0;
  uint64_t key = 0;
};

// The block being run. Launches are serialised (g_launch_mu), so one is enough.
struct Block {
  int nthreads = 0;
  std::vector<Fiber> fib;
  Fiber sched;
  std::vector<int> state;
  std::vector<Site> site;
  int cur = -1;
  std::string err;
  double* smem = nullptr;
  long long smem_doubles = 0;  // what the launch asked for
  long long smem_bytes = 0;
  long long highwater = 0;     // most doubles carved
  void (*fn)(GJ_PARAMS) = nullptr;
  GjArgs args;

  void fail(const std::string& msg) {
    if (err.empty()) err = msg;
  }
};

static Block* g_block;

#ifdef GJ_ASAN
static const void* g_sched_bottom;  // the scheduler's stack, as ASan reports it
static size_t g_sched_size;
#endif

// Switch from the running fiber back to the scheduler.
static void yield_to_scheduler() {
  Block* b = g_block;
#ifdef GJ_ASAN
  void* fake = nullptr;
  const bool last = b->state[b->cur] == kReturned || b->state[b->cur] == kKilled;
  __sanitizer_start_switch_fiber(last ? nullptr : &fake, g_sched_bottom, g_sched_size);
#endif
#ifdef GJ_FAST_SWITCH
  gj_ctx_switch(&b->fib[b->cur].sp, b->sched.sp);
#else
  swapcontext(&b->fib[b->cur].uc, &b->sched.uc);
#endif
#ifdef GJ_ASAN
  __sanitizer_finish_switch_fiber(fake, &g_sched_bottom, &g_sched_size);
#endif
}

// Switch from the scheduler to fiber t.
static void resume(int t) {
  Block* b = g_block;
  b->cur = t;
  threadIdx = dim3{(unsigned)t, 0, 0};
#ifdef GJ_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, g_stacks[t].base + sysconf(_SC_PAGESIZE), kFiberStack);
#endif
#ifdef GJ_FAST_SWITCH
  gj_ctx_switch(&b->sched.sp, b->fib[t].sp);
#else
  swapcontext(&b->sched.uc, &b->fib[t].uc);
#endif
#ifdef GJ_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

static void fiber_main() {
#ifdef GJ_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &g_sched_bottom, &g_sched_size);
#endif
  Block* b = g_block;
  const GjArgs& a = b->args;
  b->fn(a.in[0], a.in[1], a.in[2], a.in[3], a.out[0], a.out[1], a.out[2], a.floats, a.i0, a.i1, a.i2,
        a.tile, a.s, a.in4);
  b->state[b->cur] = kReturned;
  yield_to_scheduler();  // never resumed
  __builtin_trap();
}

#ifdef GJ_FAST_SWITCH
extern "C" void gj_fiber_entry() { fiber_main(); }
#endif

// Prepare fiber t to start the kernel on its stack.
static void start(int t) {
  Block* b = g_block;
  long page = sysconf(_SC_PAGESIZE);
  char* lo = g_stacks[t].base + page;
#ifdef GJ_ASAN
  __asan_unpoison_memory_region(lo, kFiberStack);
#endif
#ifdef GJ_FAST_SWITCH
  // The frame gj_ctx_switch pops: control words, r15 r14 r13 r12 rbx rbp, return address.
  // Returning into gj_fiber_entry leaves rsp ≡ 8 (mod 16), as after a call.
  uintptr_t top = ((uintptr_t)(lo + kFiberStack)) & ~(uintptr_t)15;
  uint64_t* sp = (uint64_t*)(top - 16);
  sp[1] = 0;                             // fake return address of gj_fiber_entry
  sp[0] = (uint64_t)(uintptr_t)&gj_fiber_entry;
  for (int i = 1; i <= 6; ++i) sp[-i] = 0;  // rbp rbx r12 r13 r14 r15
  uint32_t* cw = (uint32_t*)(sp - 7);
  cw[0] = 0x1f80;  // MXCSR: round to nearest, exceptions masked
  cw[1] = 0x037f;  // x87 control word: the same
  b->fib[t].sp = sp - 7;
#else
  getcontext(&b->fib[t].uc);
  b->fib[t].uc.uc_stack.ss_sp = lo;
  b->fib[t].uc.uc_stack.ss_size = kFiberStack;
  b->fib[t].uc.uc_link = nullptr;
  makecontext(&b->fib[t].uc, fiber_main, 0);
#endif
  b->state[t] = kRunning;
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

// The barrier's site key: its textual id and the return addresses of the frame-pointer chain
// (emu.go compiles with -fno-omit-frame-pointer) from here up to the fiber's first frame. An
// inlined helper has its own copy of the call below at every place it was inlined, and a
// helper left out of line has its caller's return address on the chain; either way a
// helper's barrier reached from two call sites gets two keys. noinline keeps this frame.
static void wait_at(int line, int id, int state);

__attribute__((noinline, returns_twice)) void syncthreads(int line, int id) { wait_at(line, id, kWaiting); }
__attribute__((noinline, returns_twice)) void syncwarp(int line, int id) { wait_at(line, id, kWarpWaiting); }

// The site key is taken from here: the frame chain above starts with syncthreads' or
// syncwarp's frame (noinline both, and this one too), so the return addresses of the caller
// chain are the same ones either way.
__attribute__((noinline)) static void wait_at(int line, int id, int state) {
  Block* b = g_block;
  const Stack& st = g_stacks[b->cur];
  const uintptr_t lo = (uintptr_t)st.base, hi = lo + st.bytes;
  uint64_t key = mix(0, (uint64_t)(unsigned)id);
  uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
  for (int depth = 0; depth < 64; ++depth) {
    if (fp < lo || fp + 2 * sizeof(void*) > hi || fp % sizeof(void*) != 0) break;
    const uintptr_t* frame = (const uintptr_t*)fp;
    key = mix(key, frame[1]);  // the return address of this frame
    if (frame[0] <= fp) break;  // the chain ends (saved frame pointer 0) or is not a chain
    fp = frame[0];
  }
  b->state[b->cur] = state;
  b->site[b->cur] = Site{line, key};
  yield_to_scheduler();
}

double* shared_base() { return g_block->smem; }
unsigned dynamic_smem_bytes() { return (unsigned)g_block->smem_bytes; }

double* take(double** p, long long n) {
  Block* b = g_block;
  double* r = *p;
  *p += n;
  long long used = (long long)(*p - b->smem);
  if (used > b->highwater) b->highwater = used;
  if (used > b->smem_doubles) {
    b->fail("shared memory overrun: the kernel carves " + std::to_string(used * 8) +
            " bytes, the launch gave " + std::to_string(b->smem_doubles * 8));
    b->state[b->cur] = kKilled;  // stop this fiber before it writes out of bounds
    yield_to_scheduler();
    __builtin_trap();
  }
  return r;
}

}  // namespace gjemu

// Self-test kernels of the emulator itself (not part of gatejet.cu): they show that a barrier
// really separates writes from reads, and that divergent barriers and shared-memory overruns are
// reported.
GJ_KERNEL gj_emu_selftest_barrier(GJ_PARAMS) {
  GJ_PACK(a)
  GJ_SMEM_DECL;
  double* p = gj_smem;
  double* x = GJ_TAKE(p, blockDim.x);
  x[threadIdx.x] = threadIdx.x + 1000.0 * blockIdx.x;
  if (a.i0) __syncthreads();
  ((double*)a.out[0])[blockIdx.x * blockDim.x + threadIdx.x] = x[(threadIdx.x + 1) % blockDim.x];
}
GJ_KERNEL gj_emu_selftest_divergent(GJ_PARAMS) {
  GJ_PACK(a)
  (void)a;
  if (threadIdx.x != 0) __syncthreads();
}
// Divergent barriers that share a source line: thread t < i0 reaches gj_tree_sum's barriers
// through one call, the others through another (inside a helper, __LINE__ is the same).
GJ_KERNEL gj_emu_selftest_helper_divergent(GJ_PARAMS) {
  GJ_PACK(a)
  GJ_SMEM_DECL;
  double* p = gj_smem;
  double* red = GJ_TAKE(p, 8);
  double* out = (double*)a.out[0];
  for (gj_ll k = threadIdx.x; k < 8; k += blockDim.x) red[k] = 1.0;
  if ((gj_ll)threadIdx.x >= a.i0) {
    out[threadIdx.x] = gj_tree_sum<GjBlock>(red, 8);
  } else {
    out[threadIdx.x] = -gj_tree_sum<GjBlock>(red, 8);
  }
}
// Two barriers on one line of a macro expansion; thread t < i0 takes the second.
#define GJ_EMU_EITHER_BARRIER(c) if (c) { __syncthreads(); } else { __syncthreads(); }
GJ_KERNEL gj_emu_selftest_macro_divergent(GJ_PARAMS) {
  GJ_PACK(a)
  GJ_EMU_EITHER_BARRIER((gj_ll)threadIdx.x >= a.i0)
}
#undef GJ_EMU_EITHER_BARRIER
// __syncwarp: each lane writes its slot, then (with bit 0 of i0) meets its warp, then reads its
// right-hand neighbour's slot within the warp. Warps of one block never wait for each other:
// with bit 1 of i0 only the block's first warp meets twice more.
GJ_KERNEL gj_emu_selftest_warp_barrier(GJ_PARAMS) {
  GJ_PACK(a)
  GJ_SMEM_DECL;
  double* p = gj_smem;
  double* x = GJ_TAKE(p, blockDim.x);
  const unsigned t = threadIdx.x, w0 = t & ~31u;
  if ((a.i0 & 2) && w0 == 0) {
    __syncwarp();
    __syncwarp();
  }
  x[t] = t + 1000.0 * blockIdx.x;
  if (a.i0 & 1) __syncwarp();
  const unsigned n = (w0 + 32 < blockDim.x ? 32 : blockDim.x - w0);
  ((double*)a.out[0])[blockIdx.x * blockDim.x + t] = x[w0 + (t - w0 + 1) % n];
}
// A warp whose lane i0 % 32 returns while the other lanes meet at a __syncwarp (i0 < 32), or
// meets them at another one (i0 ≥ 32).
GJ_KERNEL gj_emu_selftest_warp_divergent(GJ_PARAMS) {
  GJ_PACK(a)
  if ((gj_ll)(threadIdx.x & 31) == a.i0 % 32) {
    if (a.i0 >= 32) __syncwarp();
    return;
  }
  __syncwarp();
}
GJ_KERNEL gj_emu_selftest_overrun(GJ_PARAMS) {
  GJ_PACK(a)
  GJ_SMEM_DECL;
  double* p = gj_smem;
  double* x = GJ_TAKE(p, a.i0);
  x[0] = 1.0;
}

typedef void (*gj_entry)(GJ_PARAMS);
struct gj_table_entry {
  const char* name;
  gj_entry fn;
};

// GJ_ENTRIES again, each entry point now a row of the emulator's table.
#undef GJ_ENTRY
#define GJ_ENTRY(name) {"gj_" #name "_f32", gj_##name##_f32}, {"gj_" #name "_f64", gj_##name##_f64},
#undef GJ_WARP_ENTRY
#define GJ_WARP_ENTRY(name) \
  {"gj_" #name "_warp_f32", gj_##name##_warp_f32}, {"gj_" #name "_warp_f64", gj_##name##_warp_f64},
static const gj_table_entry gj_table[] = {
    GJ_ENTRIES{"gj_emu_selftest_barrier", gj_emu_selftest_barrier},
    {"gj_emu_selftest_divergent", gj_emu_selftest_divergent},
    {"gj_emu_selftest_helper_divergent", gj_emu_selftest_helper_divergent},
    {"gj_emu_selftest_macro_divergent", gj_emu_selftest_macro_divergent},
    {"gj_emu_selftest_warp_barrier", gj_emu_selftest_warp_barrier},
    {"gj_emu_selftest_warp_divergent", gj_emu_selftest_warp_divergent},
    {"gj_emu_selftest_overrun", gj_emu_selftest_overrun}};
static const int gj_table_len = (int)(sizeof gj_table / sizeof gj_table[0]);

// One launch at a time (the fibers share the block state).
static std::mutex g_launch_mu;

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
                             const GjArgsC* args, int order, long long* highwater, char* err,
                             int errlen) {
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

  std::lock_guard<std::mutex> launch_lock(g_launch_mu);
  if (!gjemu::ensure_stacks(block)) return gj_fail(err, errlen, "cannot allocate fiber stacks");
  gjemu::Block blk;
  blk.nthreads = block;
  blk.fn = fn;
  memcpy(&blk.args, args, sizeof blk.args);
  blk.smem_doubles = (smem_bytes + 7) / 8;
  blk.smem_bytes = smem_bytes;
  std::vector<double> smem((size_t)blk.smem_doubles + 1);
  blk.smem = smem.data();
  blk.fib.resize((size_t)block);
  blk.state.assign((size_t)block, gjemu::kRunning);
  blk.site.assign((size_t)block, gjemu::Site{});
  gjemu::g_block = &blk;
  const double poison = __longlong_as_double(0x7ff4000000000badLL);  // a NaN
  std::vector<int> perm((size_t)block);
  uint64_t rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(unsigned)order;

  blockDim = dim3{(unsigned)block, 1, 1};
  gridDim = dim3{(unsigned)grid, 1, 1};
  for (long long g = 0; g < grid && blk.err.empty(); ++g) {
    blockIdx = dim3{(unsigned)g, 0, 0};
    for (auto& x : smem) x = poison;
    for (int t = 0; t < block; ++t) gjemu::start(t);
    for (;;) {
      // Run every live fiber up to its next barrier (or its end), in the chosen order.
      for (int t = 0; t < block; ++t) perm[t] = order == 1 ? block - 1 - t : t;
      if (order >= 2) {
        for (int t = block - 1; t > 0; --t) {
          rng ^= rng << 13;
          rng ^= rng >> 7;
          rng ^= rng << 17;
          std::swap(perm[t], perm[(int)(rng % (uint64_t)(t + 1))]);
        }
      }
      for (int i = 0; i < block && blk.err.empty(); ++i) {
        int t = perm[i];
        if (blk.state[t] != gjemu::kRunning) continue;
        gjemu::resume(t);
      }
      if (!blk.err.empty()) break;  // a fiber was stopped: abandon the block
      // Warp barriers: a warp whose lanes all wait at one __syncwarp goes on (its lanes run
      // again in the next round, up to their next barrier); a warp with some lanes at a
      // __syncwarp and others returned, at a __syncthreads or at another __syncwarp diverges.
      bool released = false;
      for (int w0 = 0; w0 < block && blk.err.empty(); w0 += 32) {
        const int w1 = w0 + 32 < block ? w0 + 32 : block;
        int at = 0, same = 0;
        gjemu::Site first;
        for (int t = w0; t < w1; ++t) {
          if (blk.state[t] != gjemu::kWarpWaiting) continue;
          if (at++ == 0) first = blk.site[t];
          if (blk.site[t].key == first.key) ++same;
        }
        if (at == 0) continue;
        if (same != w1 - w0) {
          blk.fail("divergent __syncwarp in block " + std::to_string(g) + ", warp " + std::to_string(w0 / 32) +
                   ": " + std::to_string(same) + " of " + std::to_string(w1 - w0) + " lanes wait at line " +
                   std::to_string(first.line));
          break;
        }
        for (int t = w0; t < w1; ++t) blk.state[t] = gjemu::kRunning;
        released = true;
      }
      if (!blk.err.empty()) break;
      if (released) continue;
      int waiting = 0, same = 0;
      gjemu::Site first;
      bool same_line = true;
      for (int t = 0; t < block; ++t) {
        if (blk.state[t] == gjemu::kReturned) continue;
        if (waiting++ == 0) first = blk.site[t];
        if (blk.site[t].key == first.key) {
          ++same;
        } else if (blk.site[t].line != first.line) {
          same_line = false;
        }
      }
      if (waiting == 0) break;  // every fiber returned: the block is done
      if (waiting != block || same != waiting) {
        std::string where = same == waiting ? ", the rest returned"
                            : same_line     ? ", others at the same line by another call path"
                                            : ", others elsewhere";
        blk.fail("divergent __syncthreads in block " + std::to_string(g) + ": " + std::to_string(same) +
                 " of " + std::to_string(block) + " threads wait at line " + std::to_string(first.line) + where);
        break;  // abandon the block's fibers (their stacks are simply reused)
      }
      for (int t = 0; t < block; ++t) {
        if (blk.state[t] != gjemu::kReturned) blk.state[t] = gjemu::kRunning;
      }
    }
  }
  gjemu::g_block = nullptr;
  *highwater = blk.highwater * 8;
  if (!blk.err.empty()) return gj_fail(err, errlen, blk.err);
  return 0;
}
