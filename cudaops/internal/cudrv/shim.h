// The CUDA driver and NVRTC entry points the standalone backend uses, declared by hand (no
// CUDA header is needed to build) and resolved with dlopen/dlsym at first use (shim.c). The
// types and signatures follow cuda.h and nvrtc.h of CUDA 11.x and 12.x, whose ABI for these
// functions is stable; the versioned symbols (cuMemAlloc_v2...) are the ones cuda.h maps the
// plain names to.
#ifndef GATEJET_CUDRV_SHIM_H
#define GATEJET_CUDRV_SHIM_H

#include <stddef.h>

typedef int gj_CUresult; // CUresult: CUDA_SUCCESS = 0
typedef int gj_CUdevice;
typedef unsigned long long gj_CUdeviceptr; // CUdeviceptr_v2 on a 64-bit host
typedef struct gj_CUctx_st *gj_CUcontext;
typedef struct gj_CUmod_st *gj_CUmodule;
typedef struct gj_CUfunc_st *gj_CUfunction;
typedef struct gj_CUstream_st *gj_CUstream;
typedef struct gj_CUevent_st *gj_CUevent;
typedef int gj_nvrtcResult; // nvrtcResult: NVRTC_SUCCESS = 0
typedef struct gj_nvrtcProgram_st *gj_nvrtcProgram;

// GJ_NOT_LOADED is what a wrapper returns when its library, or an optional entry point, was
// not loaded; no CUresult or nvrtcResult has this value.
#define GJ_NOT_LOADED (-1)

// gj_load_driver / gj_load_nvrtc open the library at path and resolve every entry point; on
// failure they return nonzero, write a message into err (errlen bytes) and keep nothing open.
int gj_load_driver(const char *path, char *err, size_t errlen);
int gj_load_nvrtc(const char *path, char *err, size_t errlen);

gj_CUresult gj_cuGetErrorName(gj_CUresult r, const char **s);
gj_CUresult gj_cuGetErrorString(gj_CUresult r, const char **s);
gj_CUresult gj_cuInit(unsigned int flags);
gj_CUresult gj_cuDriverGetVersion(int *v);
gj_CUresult gj_cuDeviceGetCount(int *n);
gj_CUresult gj_cuDeviceGet(gj_CUdevice *d, int ordinal);
gj_CUresult gj_cuDeviceGetName(char *name, int len, gj_CUdevice d);
gj_CUresult gj_cuDeviceGetAttribute(int *v, int attr, gj_CUdevice d);
gj_CUresult gj_cuDevicePrimaryCtxRetain(gj_CUcontext *c, gj_CUdevice d);
gj_CUresult gj_cuDevicePrimaryCtxRelease(gj_CUdevice d);
gj_CUresult gj_cuCtxSetCurrent(gj_CUcontext c);
gj_CUresult gj_cuModuleLoadData(gj_CUmodule *m, const void *image);
gj_CUresult gj_cuModuleUnload(gj_CUmodule m);
gj_CUresult gj_cuModuleGetFunction(gj_CUfunction *f, gj_CUmodule m, const char *name);
// gj_launch launches f with n kernel parameters, each a 64-bit value (vals[i]).
gj_CUresult gj_launch(gj_CUfunction f, unsigned int gx, unsigned int bx, unsigned int shared,
                      gj_CUstream s, const unsigned long long *vals, int n);
gj_CUresult gj_cuMemAlloc(gj_CUdeviceptr *p, size_t n);
gj_CUresult gj_cuMemFree(gj_CUdeviceptr p);
gj_CUresult gj_cuMemAllocHost(void **p, size_t n);
gj_CUresult gj_cuMemFreeHost(void *p);
gj_CUresult gj_cuMemcpyHtoDAsync(gj_CUdeviceptr dst, const void *src, size_t n, gj_CUstream s);
gj_CUresult gj_cuMemcpyDtoHAsync(void *dst, gj_CUdeviceptr src, size_t n, gj_CUstream s);
gj_CUresult gj_cuMemcpyDtoDAsync(gj_CUdeviceptr dst, gj_CUdeviceptr src, size_t n, gj_CUstream s);
gj_CUresult gj_cuStreamCreate(gj_CUstream *s, unsigned int flags);
gj_CUresult gj_cuStreamSynchronize(gj_CUstream s);
gj_CUresult gj_cuStreamDestroy(gj_CUstream s);
gj_CUresult gj_cuEventCreate(gj_CUevent *e, unsigned int flags);
gj_CUresult gj_cuEventRecord(gj_CUevent e, gj_CUstream s);
gj_CUresult gj_cuEventSynchronize(gj_CUevent e);
gj_CUresult gj_cuEventElapsedTime(float *ms, gj_CUevent start, gj_CUevent stop);
gj_CUresult gj_cuEventDestroy(gj_CUevent e);

const char *gj_nvrtcGetErrorString(gj_nvrtcResult r);
gj_nvrtcResult gj_nvrtcVersion(int *major, int *minor);
gj_nvrtcResult gj_nvrtcGetNumSupportedArchs(int *n);
gj_nvrtcResult gj_nvrtcGetSupportedArchs(int *archs);
gj_nvrtcResult gj_nvrtcCreateProgram(gj_nvrtcProgram *p, const char *src, const char *name);
gj_nvrtcResult gj_nvrtcCompileProgram(gj_nvrtcProgram p, int n, const char *const *options);
gj_nvrtcResult gj_nvrtcGetPTXSize(gj_nvrtcProgram p, size_t *n);
gj_nvrtcResult gj_nvrtcGetPTX(gj_nvrtcProgram p, char *ptx);
gj_nvrtcResult gj_nvrtcGetCUBINSize(gj_nvrtcProgram p, size_t *n);
gj_nvrtcResult gj_nvrtcGetCUBIN(gj_nvrtcProgram p, char *cubin);
gj_nvrtcResult gj_nvrtcGetProgramLogSize(gj_nvrtcProgram p, size_t *n);
gj_nvrtcResult gj_nvrtcGetProgramLog(gj_nvrtcProgram p, char *log);
gj_nvrtcResult gj_nvrtcDestroyProgram(gj_nvrtcProgram *p);

#endif
