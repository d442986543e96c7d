// The CUDA driver entry points this package calls, declared by hand (no CUDA header is needed to
// build) and resolved with dlopen/dlsym when the driver is first used (shim.c). Each wrapper
// returns the driver's CUresult, or GJ_NOT_LOADED when the driver library is not open, or
// GJ_NO_ENTRY when the library lacks that entry point. The versioned names bound (cuMemAlloc_v2,
// cuCtxCreate_v2, ...) are exported by the drivers of CUDA 11, 12 and 13 alike; CUDA 13's
// header maps cuCtxCreate to cuCtxCreate_v4, which is used only where _v2 is missing.
#ifndef GJ_CU_SHIM_H
#define GJ_CU_SHIM_H

#include <stddef.h>

typedef int gjcu_result;
typedef int gjcu_device;
typedef unsigned long long gjcu_ptr; // CUdeviceptr on a 64-bit host
typedef struct gjcu_ctx_st *gjcu_ctx;
typedef struct gjcu_mod_st *gjcu_mod;
typedef struct gjcu_func_st *gjcu_func;
typedef struct gjcu_stream_st *gjcu_stream;

#define GJ_NOT_LOADED (-1)
#define GJ_NO_ENTRY (-2)

// gjcu_load opens the driver at path and resolves its entry points: nonzero, with a message
// in err, when the library cannot be opened or lacks one of the core entry points (device
// queries, errors, cuInit); the others are looked up too but may be missing.
int gjcu_load(const char *path, char *err, size_t errlen);

gjcu_result gjcu_GetErrorName(gjcu_result r, const char **s);
gjcu_result gjcu_GetErrorString(gjcu_result r, const char **s);
gjcu_result gjcu_Init(unsigned int flags);
gjcu_result gjcu_DriverGetVersion(int *v);
gjcu_result gjcu_DeviceGetCount(int *n);
gjcu_result gjcu_DeviceGet(gjcu_device *d, int ordinal);
gjcu_result gjcu_DeviceGetName(char *name, int len, gjcu_device d);
gjcu_result gjcu_DeviceGetAttribute(int *v, int attr, gjcu_device d);
gjcu_result gjcu_DeviceTotalMem(size_t *bytes, gjcu_device d);
gjcu_result gjcu_CtxCreate(gjcu_ctx *c, unsigned int flags, gjcu_device d);
gjcu_result gjcu_CtxDestroy(gjcu_ctx c);
gjcu_result gjcu_CtxSetCurrent(gjcu_ctx c);
gjcu_result gjcu_CtxGetCurrent(gjcu_ctx *c);
gjcu_result gjcu_CtxSynchronize(void);
gjcu_result gjcu_MemGetInfo(size_t *free, size_t *total);
gjcu_result gjcu_MemAlloc(gjcu_ptr *p, size_t n);
gjcu_result gjcu_MemAllocManaged(gjcu_ptr *p, size_t n, unsigned int flags);
gjcu_result gjcu_MemFree(gjcu_ptr p);
gjcu_result gjcu_MemGetAddressRange(gjcu_ptr *base, size_t *size, gjcu_ptr p);
gjcu_result gjcu_Memcpy(gjcu_ptr dst, gjcu_ptr src, size_t n);
gjcu_result gjcu_MemcpyHtoD(gjcu_ptr dst, const void *src, size_t n);
gjcu_result gjcu_MemcpyDtoH(void *dst, gjcu_ptr src, size_t n);
gjcu_result gjcu_MemcpyDtoD(gjcu_ptr dst, gjcu_ptr src, size_t n);
gjcu_result gjcu_ModuleLoadData(gjcu_mod *m, const void *image);
gjcu_result gjcu_ModuleUnload(gjcu_mod m);
gjcu_result gjcu_ModuleGetFunction(gjcu_func *f, gjcu_mod m, const char *name);
// gjcu_launch launches f with n kernel parameters, each a 64-bit value (vals[i]); n is at
// most GJCU_MAX_PARAMS.
#define GJCU_MAX_PARAMS 64
gjcu_result gjcu_launch(gjcu_func f, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                        gjcu_stream s, const unsigned long long *vals, int n);

#endif
