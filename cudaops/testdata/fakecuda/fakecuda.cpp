// fakecuda: a stand-in for libcuda.so.1 that runs the kernels on the host emulator
// (cudaops/internal/emu/emu.cpp), so the standalone device backend's own code (driver loading,
// device queries, module loading, pooled device and pinned buffers, asynchronous copies,
// launch parameters, events) runs in tests without a GPU. Device memory is host memory; every
// call runs at once (a stream is in order anyway). It checks what a real driver would refuse
// or what would be a bug on a GPU: calls without a current context, copies from host memory
// that is not pinned or past the end of an allocation, freeing unknown pointers, launching an
// entry point the loaded image does not hold. Environment: GATEJET_FAKECUDA_CC=100 makes the
// device sm_100 (default 90), newer than NVRTC 11.8, so the backend loads PTX for compute_90;
// GATEJET_FAKECUDA_OLD_DRIVER=1 makes the driver CUDA 11.4, refusing PTX with
// CUDA_ERROR_UNSUPPORTED_PTX_VERSION. It also serves gorgonia.org/cu's stand-in (cudacompat/, the tests
// there): cuCtxCreate_v2 retains the one context and makes it current, managed memory is device
// memory, the synchronous copies take any host memory, and the default stream (NULL) is
// accepted. Built by the cudaops tests (tag gatejetcuda) with the
// emulator's own flags (its divergence check needs frame pointers):
//
//	g++ -std=c++17 -O2 -fno-omit-frame-pointer -shared -fPIC -o libcuda-fake.so \
//	    fakecuda.cpp ../../internal/emu/emu.cpp -lpthread
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <map>
#include <mutex>
#include <set>
#include <string>

#include "../../internal/emu/gjemu.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  OK = 0,
  INVALID_VALUE = 1,
  NOT_INITIALIZED = 3,
  INVALID_IMAGE = 200,
  UNSUPPORTED_PTX_VERSION = 222,
  INVALID_CONTEXT = 201,
  INVALID_HANDLE = 400,
  NOT_FOUND = 500,
  LAUNCH_FAILED = 719,
};

namespace {

struct Ctx {
  int magic;
};
struct Module {
  std::string image;
};
struct Function {
  std::string name;
};
struct Stream {
  int magic;
};
struct Event {
  double t;
};

std::mutex mu;
bool initialised = false;
int cc = 90;             // compute capability ×10
bool old_driver = false; // CUDA 11.4: refuses PTX from NVRTC 11.8
Ctx primary = {0x600d};
int retained = 0;
thread_local Ctx *current = nullptr;
std::map<char *, size_t> device_mem;  // allocation → size
std::map<char *, size_t> pinned_mem;
std::set<Module *> modules;
std::set<Stream *> streams;

CUresult need_ctx() {
  if (!initialised) return NOT_INITIALIZED;
  return current == &primary && retained > 0 ? OK : INVALID_CONTEXT;
}

// within reports whether [p, p+n) lies in one allocation of m.
bool within(const std::map<char *, size_t> &m, const void *p, size_t n) {
  const char *c = static_cast<const char *>(p);
  auto it = m.upper_bound(const_cast<char *>(c));
  if (it == m.begin()) return false;
  --it;
  return c >= it->first && c + n <= it->first + it->second;
}

double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

}  // namespace

extern "C" {

CUresult cuGetErrorName(CUresult r, const char **s) {
  switch (r) {
    case OK: *s = "CUDA_SUCCESS"; return OK;
    case INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return OK;
    case NOT_INITIALIZED: *s = "CUDA_ERROR_NOT_INITIALIZED"; return OK;
    case INVALID_IMAGE: *s = "CUDA_ERROR_INVALID_IMAGE"; return OK;
    case UNSUPPORTED_PTX_VERSION: *s = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"; return OK;
    case INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; return OK;
    case INVALID_HANDLE: *s = "CUDA_ERROR_INVALID_HANDLE"; return OK;
    case NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return OK;
    case LAUNCH_FAILED: *s = "CUDA_ERROR_LAUNCH_FAILED"; return OK;
  }
  *s = nullptr;
  return INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult r, const char **s) {
  CUresult e = cuGetErrorName(r, s);
  if (e == OK) *s = "reported by the fake driver (host emulator)";
  return e;
}

CUresult cuInit(unsigned int flags) {
  if (flags != 0) return INVALID_VALUE;
  std::lock_guard<std::mutex> l(mu);
  if (const char *e = getenv("GATEJET_FAKECUDA_CC")) cc = atoi(e);
  old_driver = getenv("GATEJET_FAKECUDA_OLD_DRIVER") != nullptr;
  initialised = true;
  return OK;
}

CUresult cuDriverGetVersion(int *v) {
  *v = old_driver ? 11040 : 11080;
  return OK;
}

CUresult cuDeviceGetCount(int *n) {
  if (!initialised) return NOT_INITIALIZED;
  *n = 1;
  return OK;
}

CUresult cuDeviceGet(int *d, int ordinal) {
  if (!initialised) return NOT_INITIALIZED;
  if (ordinal != 0) return INVALID_VALUE;
  *d = 0;
  return OK;
}

CUresult cuDeviceGetName(char *name, int len, int d) {
  if (d != 0 || len <= 0) return INVALID_VALUE;
  strncpy(name, "gatejet fake device (host emulator)", len);
  name[len - 1] = 0;
  return OK;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  if (d != 0) return INVALID_VALUE;
  switch (attr) {
    case 1: *v = 1024; return OK;        // MAX_THREADS_PER_BLOCK
    case 2: case 3: *v = 1024; return OK;  // MAX_BLOCK_DIM_X, _Y
    case 4: *v = 64; return OK;          // MAX_BLOCK_DIM_Z
    case 6: case 7: *v = 65535; return OK;  // MAX_GRID_DIM_Y, _Z
    case 10: *v = 32; return OK;         // WARP_SIZE
    case 5: *v = 2147483647; return OK;  // MAX_GRID_DIM_X
    case 8: *v = 49152; return OK;       // MAX_SHARED_MEMORY_PER_BLOCK
    case 75: *v = cc / 10; return OK;    // COMPUTE_CAPABILITY_MAJOR
    case 76: *v = cc % 10; return OK;    // COMPUTE_CAPABILITY_MINOR
  }
  return INVALID_VALUE;
}

CUresult cuDevicePrimaryCtxRetain(Ctx **c, int d) {
  if (!initialised) return NOT_INITIALIZED;
  if (d != 0) return INVALID_VALUE;
  std::lock_guard<std::mutex> l(mu);
  retained++;
  *c = &primary;
  return OK;
}

CUresult cuDevicePrimaryCtxRelease_v2(int d) {
  std::lock_guard<std::mutex> l(mu);
  if (d != 0 || retained == 0) return INVALID_VALUE;
  retained--;
  return OK;
}

CUresult cuCtxSetCurrent(Ctx *c) {
  if (c != &primary) return INVALID_CONTEXT;
  current = c;
  return OK;
}

CUresult cuModuleLoadData(Module **m, const void *image) {
  if (CUresult e = need_ctx()) return e;
  const char *p = static_cast<const char *>(image);
  std::string img;
  if (memcmp(p, "\x7f" "ELF", 4) == 0) {
    // A CUBIN: the ELF header's section table ends the image (64-bit ELF).
    unsigned long long shoff;
    unsigned short shentsize, shnum;
    memcpy(&shoff, p + 0x28, 8);
    memcpy(&shentsize, p + 0x3a, 2);
    memcpy(&shnum, p + 0x3c, 2);
    img.assign(p, shoff + (unsigned long long)shentsize * shnum);
  } else if (strstr(p, ".target") != nullptr) {
    if (old_driver) return UNSUPPORTED_PTX_VERSION;
    img.assign(p);  // PTX text
  } else {
    return INVALID_IMAGE;
  }
  std::lock_guard<std::mutex> l(mu);
  *m = new Module{img};
  modules.insert(*m);
  return OK;
}

CUresult cuModuleUnload(Module *m) {
  std::lock_guard<std::mutex> l(mu);
  if (!modules.erase(m)) return INVALID_HANDLE;
  delete m;
  return OK;
}

CUresult cuModuleGetFunction(Function **f, Module *m, const char *name) {
  if (CUresult e = need_ctx()) return e;
  std::lock_guard<std::mutex> l(mu);
  if (!modules.count(m)) return INVALID_HANDLE;
  if (m->image.find(name) == std::string::npos) return NOT_FOUND;  // not in this module
  bool known = false;
  for (int i = 0; i < gj_emu_kernel_count(); i++) known = known || strcmp(gj_emu_kernel_name(i), name) == 0;
  if (!known) return NOT_FOUND;
  *f = new Function{name};  // kept until exit, as the driver keeps them with the module
  return OK;
}

CUresult cuLaunchKernel(Function *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, Stream *s, void **params, void **extra) {
  if (CUresult e = need_ctx()) return e;
  if (gy != 1 || gz != 1 || by != 1 || bz != 1 || extra != nullptr || params == nullptr) return INVALID_VALUE;
  {
    std::lock_guard<std::mutex> l(mu);
    if (s != nullptr && !streams.count(s)) return INVALID_HANDLE;  // NULL: the default stream
  }
  // The 14 parameters of every entry point, each 64 bits, in GjArgs order.
  unsigned long long v[14];
  for (int i = 0; i < 14; i++) memcpy(&v[i], params[i], 8);
  GjArgsC a;
  static_assert(sizeof a == sizeof v, "GjArgsC is 14 64-bit values");
  memcpy(&a, v, sizeof a);
  long long hw = 0;
  char err[256];
  if (gj_emu_launch(f->name.c_str(), gx, (int)bx, shared, &a, 0, &hw, err, sizeof err) != 0) {
    fprintf(stderr, "fakecuda: %s: %s\n", f->name.c_str(), err);  // the test shows it
    return LAUNCH_FAILED;
  }
  return OK;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  if (CUresult e = need_ctx()) return e;
  if (n == 0) return INVALID_VALUE;
  char *q = new char[n];
  memset(q, 0xff, n);  // NaN-like garbage: a kernel must write what it outputs
  std::lock_guard<std::mutex> l(mu);
  device_mem[q] = n;
  *p = (CUdeviceptr)q;
  return OK;
}

CUresult cuMemFree_v2(CUdeviceptr p) {
  if (CUresult e = need_ctx()) return e;
  std::lock_guard<std::mutex> l(mu);
  if (!device_mem.erase((char *)p)) return INVALID_VALUE;
  delete[] (char *)p;
  return OK;
}

CUresult cuMemAllocHost_v2(void **p, size_t n) {
  if (CUresult e = need_ctx()) return e;
  if (n == 0) return INVALID_VALUE;
  char *q = new char[n];
  std::lock_guard<std::mutex> l(mu);
  pinned_mem[q] = n;
  *p = q;
  return OK;
}

CUresult cuMemFreeHost(void *p) {
  if (CUresult e = need_ctx()) return e;
  std::lock_guard<std::mutex> l(mu);
  if (!pinned_mem.erase((char *)p)) return INVALID_VALUE;
  delete[] (char *)p;
  return OK;
}

static CUresult copy(void *dst, bool dst_dev, const void *src, bool src_dev, size_t n, Stream *s) {
  if (CUresult e = need_ctx()) return e;
  std::lock_guard<std::mutex> l(mu);
  if (!streams.count(s)) return INVALID_HANDLE;
  if (!within(dst_dev ? device_mem : pinned_mem, dst, n)) return INVALID_VALUE;
  if (!within(src_dev ? device_mem : pinned_mem, src, n)) return INVALID_VALUE;
  memcpy(dst, src, n);
  return OK;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, Stream *s) {
  return copy((void *)dst, true, src, false, n, s);
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, Stream *s) {
  return copy(dst, false, (const void *)src, true, n, s);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, Stream *s) {
  return copy((void *)dst, true, (const void *)src, true, n, s);
}

// The context, copies and managed memory of gorgonia.org/cu's stand-in.

CUresult cuCtxCreate_v2(Ctx **c, unsigned int flags, int d) {
  if (!initialised) return NOT_INITIALIZED;
  if (d != 0 || flags > 0x1f) return INVALID_VALUE;
  std::lock_guard<std::mutex> l(mu);
  retained++;
  current = &primary;
  *c = &primary;
  return OK;
}

CUresult cuCtxDestroy_v2(Ctx *c) {
  std::lock_guard<std::mutex> l(mu);
  if (c != &primary || retained == 0) return INVALID_CONTEXT;
  retained--;
  return OK;
}

CUresult cuCtxGetCurrent(Ctx **c) {
  if (!initialised) return NOT_INITIALIZED;
  *c = current;
  return OK;
}

CUresult cuCtxSynchronize() { return need_ctx(); }

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
  if (CUresult e = need_ctx()) return e;
  std::lock_guard<std::mutex> l(mu);
  size_t used = 0;
  for (auto &a : device_mem) used += a.second;
  *total = size_t(4) << 30;
  *free_bytes = used < *total ? *total - used : 0;
  return OK;
}

CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags) {
  if (flags != 1 && flags != 2) return INVALID_VALUE;  // CU_MEM_ATTACH_GLOBAL or _HOST
  return cuMemAlloc_v2(p, n);
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
  if (CUresult e = need_ctx()) return e;
  std::lock_guard<std::mutex> l(mu);
  auto it = device_mem.upper_bound((char *)p);
  if (it == device_mem.begin()) return NOT_FOUND;
  --it;
  if ((char *)p >= it->first + it->second) return NOT_FOUND;
  *base = (CUdeviceptr)it->first;
  *size = it->second;
  return OK;
}

// sync_copy: the synchronous copies, whose host side may be any host memory.
static CUresult sync_copy(void *dst, bool dst_dev, const void *src, bool src_dev, size_t n) {
  if (CUresult e = need_ctx()) return e;
  std::lock_guard<std::mutex> l(mu);
  if (dst_dev && !within(device_mem, dst, n)) return INVALID_VALUE;
  if (src_dev && !within(device_mem, src, n)) return INVALID_VALUE;
  memcpy(dst, src, n);
  return OK;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) { return sync_copy((void *)dst, true, src, false, n); }
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { return sync_copy(dst, false, (const void *)src, true, n); }
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  return sync_copy((void *)dst, true, (const void *)src, true, n);
}
// cuMemcpy: unified addressing; here both sides must be device memory (Gorgonia's use).
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) { return sync_copy((void *)dst, true, (const void *)src, true, n); }

CUresult cuStreamCreate(Stream **s, unsigned int flags) {
  if (CUresult e = need_ctx()) return e;
  if (flags != 1) return INVALID_VALUE;  // the backend's stream is CU_STREAM_NON_BLOCKING
  std::lock_guard<std::mutex> l(mu);
  *s = new Stream{1};
  streams.insert(*s);
  return OK;
}

CUresult cuStreamSynchronize(Stream *s) {
  if (CUresult e = need_ctx()) return e;
  std::lock_guard<std::mutex> l(mu);
  return streams.count(s) ? OK : INVALID_HANDLE;
}

CUresult cuStreamDestroy_v2(Stream *s) {
  std::lock_guard<std::mutex> l(mu);
  if (!streams.erase(s)) return INVALID_HANDLE;
  delete s;
  return OK;
}

CUresult cuEventCreate(Event **e, unsigned int flags) {
  if (CUresult r = need_ctx()) return r;
  if (flags != 0) return INVALID_VALUE;
  *e = new Event{0};
  return OK;
}

CUresult cuEventRecord(Event *e, Stream *s) {
  if (CUresult r = need_ctx()) return r;
  {
    std::lock_guard<std::mutex> l(mu);
    if (!streams.count(s)) return INVALID_HANDLE;
  }
  e->t = now_ms();
  return OK;
}

CUresult cuEventSynchronize(Event *) { return need_ctx(); }

CUresult cuEventElapsedTime(float *ms, Event *a, Event *b) {
  *ms = (float)(b->t - a->t);
  return OK;
}

CUresult cuEventDestroy_v2(Event *e) {
  delete e;
  return OK;
}

}  // extern "C"
