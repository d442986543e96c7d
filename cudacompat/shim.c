#include "shim.h"
#include "dlload.h"

// The driver's entry points, set once by gjcu_load (the Go side serialises it with
// sync.OnceValue and calls nothing before it succeeded) and read-only afterwards.
static struct {
	gjcu_result (*GetErrorName)(gjcu_result, const char **);
	gjcu_result (*GetErrorString)(gjcu_result, const char **);
	gjcu_result (*Init)(unsigned int);
	gjcu_result (*DriverGetVersion)(int *);
	gjcu_result (*DeviceGetCount)(int *);
	gjcu_result (*DeviceGet)(gjcu_device *, int);
	gjcu_result (*DeviceGetName)(char *, int, gjcu_device);
	gjcu_result (*DeviceGetAttribute)(int *, int, gjcu_device);
	gjcu_result (*DeviceTotalMem)(size_t *, gjcu_device);
	gjcu_result (*CtxCreate2)(gjcu_ctx *, unsigned int, gjcu_device);
	gjcu_result (*CtxCreate4)(gjcu_ctx *, void *, unsigned int, gjcu_device);
	gjcu_result (*CtxDestroy)(gjcu_ctx);
	gjcu_result (*CtxSetCurrent)(gjcu_ctx);
	gjcu_result (*CtxGetCurrent)(gjcu_ctx *);
	gjcu_result (*CtxSynchronize)(void);
	gjcu_result (*MemGetInfo)(size_t *, size_t *);
	gjcu_result (*MemAlloc)(gjcu_ptr *, size_t);
	gjcu_result (*MemAllocManaged)(gjcu_ptr *, size_t, unsigned int);
	gjcu_result (*MemFree)(gjcu_ptr);
	gjcu_result (*MemGetAddressRange)(gjcu_ptr *, size_t *, gjcu_ptr);
	gjcu_result (*Memcpy)(gjcu_ptr, gjcu_ptr, size_t);
	gjcu_result (*MemcpyHtoD)(gjcu_ptr, const void *, size_t);
	gjcu_result (*MemcpyDtoH)(void *, gjcu_ptr, size_t);
	gjcu_result (*MemcpyDtoD)(gjcu_ptr, gjcu_ptr, size_t);
	gjcu_result (*ModuleLoadData)(gjcu_mod *, const void *);
	gjcu_result (*ModuleUnload)(gjcu_mod);
	gjcu_result (*ModuleGetFunction)(gjcu_func *, gjcu_mod, const char *);
	gjcu_result (*LaunchKernel)(gjcu_func, unsigned int, unsigned int, unsigned int, unsigned int,
	                            unsigned int, unsigned int, unsigned int, gjcu_stream, void **, void **);
} drv;

static const gj_dlsym syms[] = {
	{(void **)&drv.GetErrorName, "cuGetErrorName", 1},
	{(void **)&drv.GetErrorString, "cuGetErrorString", 1},
	{(void **)&drv.Init, "cuInit", 1},
	{(void **)&drv.DriverGetVersion, "cuDriverGetVersion", 1},
	{(void **)&drv.DeviceGetCount, "cuDeviceGetCount", 1},
	{(void **)&drv.DeviceGet, "cuDeviceGet", 1},
	{(void **)&drv.DeviceGetName, "cuDeviceGetName", 1},
	{(void **)&drv.DeviceGetAttribute, "cuDeviceGetAttribute", 1},
	{(void **)&drv.DeviceTotalMem, "cuDeviceTotalMem_v2", 0},
	{(void **)&drv.CtxCreate2, "cuCtxCreate_v2", 0},
	{(void **)&drv.CtxCreate4, "cuCtxCreate_v4", 0},
	{(void **)&drv.CtxDestroy, "cuCtxDestroy_v2", 0},
	{(void **)&drv.CtxSetCurrent, "cuCtxSetCurrent", 0},
	{(void **)&drv.CtxGetCurrent, "cuCtxGetCurrent", 0},
	{(void **)&drv.CtxSynchronize, "cuCtxSynchronize", 0},
	{(void **)&drv.MemGetInfo, "cuMemGetInfo_v2", 0},
	{(void **)&drv.MemAlloc, "cuMemAlloc_v2", 0},
	{(void **)&drv.MemAllocManaged, "cuMemAllocManaged", 0},
	{(void **)&drv.MemFree, "cuMemFree_v2", 0},
	{(void **)&drv.MemGetAddressRange, "cuMemGetAddressRange_v2", 0},
	{(void **)&drv.Memcpy, "cuMemcpy", 0},
	{(void **)&drv.MemcpyHtoD, "cuMemcpyHtoD_v2", 0},
	{(void **)&drv.MemcpyDtoH, "cuMemcpyDtoH_v2", 0},
	{(void **)&drv.MemcpyDtoD, "cuMemcpyDtoD_v2", 0},
	{(void **)&drv.ModuleLoadData, "cuModuleLoadData", 0},
	{(void **)&drv.ModuleUnload, "cuModuleUnload", 0},
	{(void **)&drv.ModuleGetFunction, "cuModuleGetFunction", 0},
	{(void **)&drv.LaunchKernel, "cuLaunchKernel", 0},
};

#define NSYMS (sizeof syms / sizeof syms[0])

int gjcu_load(const char *path, char *err, size_t errlen) {
	return gj_dlload(path, syms, NSYMS, err, errlen);
}

// CALL forwards to the entry point f, or says why it cannot.
#define CALL(f, ...)                                               \
	do {                                                           \
		if (drv.Init == NULL) return GJ_NOT_LOADED;                \
		return drv.f ? drv.f(__VA_ARGS__) : GJ_NO_ENTRY;           \
	} while (0)

gjcu_result gjcu_GetErrorName(gjcu_result r, const char **s) { CALL(GetErrorName, r, s); }
gjcu_result gjcu_GetErrorString(gjcu_result r, const char **s) { CALL(GetErrorString, r, s); }
gjcu_result gjcu_Init(unsigned int flags) { CALL(Init, flags); }
gjcu_result gjcu_DriverGetVersion(int *v) { CALL(DriverGetVersion, v); }
gjcu_result gjcu_DeviceGetCount(int *n) { CALL(DeviceGetCount, n); }
gjcu_result gjcu_DeviceGet(gjcu_device *d, int ordinal) { CALL(DeviceGet, d, ordinal); }
gjcu_result gjcu_DeviceGetName(char *name, int len, gjcu_device d) { CALL(DeviceGetName, name, len, d); }
gjcu_result gjcu_DeviceGetAttribute(int *v, int attr, gjcu_device d) { CALL(DeviceGetAttribute, v, attr, d); }
gjcu_result gjcu_DeviceTotalMem(size_t *bytes, gjcu_device d) { CALL(DeviceTotalMem, bytes, d); }
gjcu_result gjcu_CtxDestroy(gjcu_ctx c) { CALL(CtxDestroy, c); }
gjcu_result gjcu_CtxSetCurrent(gjcu_ctx c) { CALL(CtxSetCurrent, c); }
gjcu_result gjcu_CtxGetCurrent(gjcu_ctx *c) { CALL(CtxGetCurrent, c); }
gjcu_result gjcu_CtxSynchronize(void) { CALL(CtxSynchronize); }
gjcu_result gjcu_MemGetInfo(size_t *free, size_t *total) { CALL(MemGetInfo, free, total); }
gjcu_result gjcu_MemAlloc(gjcu_ptr *p, size_t n) { CALL(MemAlloc, p, n); }
gjcu_result gjcu_MemAllocManaged(gjcu_ptr *p, size_t n, unsigned int flags) { CALL(MemAllocManaged, p, n, flags); }
gjcu_result gjcu_MemFree(gjcu_ptr p) { CALL(MemFree, p); }
gjcu_result gjcu_MemGetAddressRange(gjcu_ptr *base, size_t *size, gjcu_ptr p) { CALL(MemGetAddressRange, base, size, p); }
gjcu_result gjcu_Memcpy(gjcu_ptr dst, gjcu_ptr src, size_t n) { CALL(Memcpy, dst, src, n); }
gjcu_result gjcu_MemcpyHtoD(gjcu_ptr dst, const void *src, size_t n) { CALL(MemcpyHtoD, dst, src, n); }
gjcu_result gjcu_MemcpyDtoH(void *dst, gjcu_ptr src, size_t n) { CALL(MemcpyDtoH, dst, src, n); }
gjcu_result gjcu_MemcpyDtoD(gjcu_ptr dst, gjcu_ptr src, size_t n) { CALL(MemcpyDtoD, dst, src, n); }
gjcu_result gjcu_ModuleLoadData(gjcu_mod *m, const void *image) { CALL(ModuleLoadData, m, image); }
gjcu_result gjcu_ModuleUnload(gjcu_mod m) { CALL(ModuleUnload, m); }
gjcu_result gjcu_ModuleGetFunction(gjcu_func *f, gjcu_mod m, const char *name) { CALL(ModuleGetFunction, f, m, name); }

// cuCtxCreate_v2, or CUDA 13's cuCtxCreate_v4 with no creation parameters, which is the same.
gjcu_result gjcu_CtxCreate(gjcu_ctx *c, unsigned int flags, gjcu_device d) {
	if (drv.Init == NULL) return GJ_NOT_LOADED;
	if (drv.CtxCreate2) return drv.CtxCreate2(c, flags, d);
	if (drv.CtxCreate4) return drv.CtxCreate4(c, NULL, flags, d);
	return GJ_NO_ENTRY;
}

gjcu_result gjcu_launch(gjcu_func f, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                        gjcu_stream s, const unsigned long long *vals, int n) {
	void *params[GJCU_MAX_PARAMS];
	if (drv.Init == NULL) return GJ_NOT_LOADED;
	if (drv.LaunchKernel == NULL) return GJ_NO_ENTRY;
	if (n < 0 || n > GJCU_MAX_PARAMS) return 1; // CUDA_ERROR_INVALID_VALUE
	for (int i = 0; i < n; i++) {
		params[i] = (void *)&vals[i]; // cuLaunchKernel copies the values before it returns
	}
	return drv.LaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, n > 0 ? params : NULL, NULL);
}
