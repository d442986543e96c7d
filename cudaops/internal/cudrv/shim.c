//go:build gatejetcuda || cuda

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "shim.h"

// The entry points of each library, filled once by gj_load_* (the Go side serialises the loads
// with sync.OnceValue and calls nothing before a load succeeded) and read-only afterwards.
static struct {
	gj_CUresult (*cuGetErrorName)(gj_CUresult, const char **);
	gj_CUresult (*cuGetErrorString)(gj_CUresult, const char **);
	gj_CUresult (*cuInit)(unsigned int);
	gj_CUresult (*cuDriverGetVersion)(int *);
	gj_CUresult (*cuDeviceGetCount)(int *);
	gj_CUresult (*cuDeviceGet)(gj_CUdevice *, int);
	gj_CUresult (*cuDeviceGetName)(char *, int, gj_CUdevice);
	gj_CUresult (*cuDeviceGetAttribute)(int *, int, gj_CUdevice);
	gj_CUresult (*cuDevicePrimaryCtxRetain)(gj_CUcontext *, gj_CUdevice);
	gj_CUresult (*cuDevicePrimaryCtxRelease)(gj_CUdevice);
	gj_CUresult (*cuCtxSetCurrent)(gj_CUcontext);
	gj_CUresult (*cuModuleLoadData)(gj_CUmodule *, const void *);
	gj_CUresult (*cuModuleUnload)(gj_CUmodule);
	gj_CUresult (*cuModuleGetFunction)(gj_CUfunction *, gj_CUmodule, const char *);
	gj_CUresult (*cuLaunchKernel)(gj_CUfunction, unsigned int, unsigned int, unsigned int,
	                              unsigned int, unsigned int, unsigned int, unsigned int,
	                              gj_CUstream, void **, void **);
	gj_CUresult (*cuMemAlloc)(gj_CUdeviceptr *, size_t);
	gj_CUresult (*cuMemFree)(gj_CUdeviceptr);
	gj_CUresult (*cuMemAllocHost)(void **, size_t);
	gj_CUresult (*cuMemFreeHost)(void *);
	gj_CUresult (*cuMemcpyHtoDAsync)(gj_CUdeviceptr, const void *, size_t, gj_CUstream);
	gj_CUresult (*cuMemcpyDtoHAsync)(void *, gj_CUdeviceptr, size_t, gj_CUstream);
	gj_CUresult (*cuMemcpyDtoDAsync)(gj_CUdeviceptr, gj_CUdeviceptr, size_t, gj_CUstream);
	gj_CUresult (*cuStreamCreate)(gj_CUstream *, unsigned int);
	gj_CUresult (*cuStreamSynchronize)(gj_CUstream);
	gj_CUresult (*cuStreamDestroy)(gj_CUstream);
	gj_CUresult (*cuEventCreate)(gj_CUevent *, unsigned int);
	gj_CUresult (*cuEventRecord)(gj_CUevent, gj_CUstream);
	gj_CUresult (*cuEventSynchronize)(gj_CUevent);
	gj_CUresult (*cuEventElapsedTime)(float *, gj_CUevent, gj_CUevent);
	gj_CUresult (*cuEventDestroy)(gj_CUevent);
} drv;

static struct {
	const char *(*nvrtcGetErrorString)(gj_nvrtcResult);
	gj_nvrtcResult (*nvrtcVersion)(int *, int *);
	gj_nvrtcResult (*nvrtcGetNumSupportedArchs)(int *); // NVRTC 11.2+, optional
	gj_nvrtcResult (*nvrtcGetSupportedArchs)(int *);    // NVRTC 11.2+, optional
	gj_nvrtcResult (*nvrtcCreateProgram)(gj_nvrtcProgram *, const char *, const char *, int,
	                                     const char *const *, const char *const *);
	gj_nvrtcResult (*nvrtcCompileProgram)(gj_nvrtcProgram, int, const char *const *);
	gj_nvrtcResult (*nvrtcGetPTXSize)(gj_nvrtcProgram, size_t *);
	gj_nvrtcResult (*nvrtcGetPTX)(gj_nvrtcProgram, char *);
	gj_nvrtcResult (*nvrtcGetCUBINSize)(gj_nvrtcProgram, size_t *); // NVRTC 11.1+, optional
	gj_nvrtcResult (*nvrtcGetCUBIN)(gj_nvrtcProgram, char *);       // NVRTC 11.1+, optional
	gj_nvrtcResult (*nvrtcGetProgramLogSize)(gj_nvrtcProgram, size_t *);
	gj_nvrtcResult (*nvrtcGetProgramLog)(gj_nvrtcProgram, char *);
	gj_nvrtcResult (*nvrtcDestroyProgram)(gj_nvrtcProgram *);
} rtc;

// The entry points of both libraries, in one table: lib says which library each is looked up
// in, slot where its address goes; an optional one may be missing (its slot stays NULL).
enum { LIB_DRIVER, LIB_NVRTC };

static const struct sym {
	int lib;
	void **slot;
	const char *name;
	int optional;
} syms[] = {
#define DRV(field, name) {LIB_DRIVER, (void **)&drv.field, name, 0}
#define RTC(field, name) {LIB_NVRTC, (void **)&rtc.field, name, 0}
#define RTC_OPT(field, name) {LIB_NVRTC, (void **)&rtc.field, name, 1}
	DRV(cuGetErrorName, "cuGetErrorName"),
	DRV(cuGetErrorString, "cuGetErrorString"),
	DRV(cuInit, "cuInit"),
	DRV(cuDriverGetVersion, "cuDriverGetVersion"),
	DRV(cuDeviceGetCount, "cuDeviceGetCount"),
	DRV(cuDeviceGet, "cuDeviceGet"),
	DRV(cuDeviceGetName, "cuDeviceGetName"),
	DRV(cuDeviceGetAttribute, "cuDeviceGetAttribute"),
	DRV(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
	DRV(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
	DRV(cuCtxSetCurrent, "cuCtxSetCurrent"),
	DRV(cuModuleLoadData, "cuModuleLoadData"),
	DRV(cuModuleUnload, "cuModuleUnload"),
	DRV(cuModuleGetFunction, "cuModuleGetFunction"),
	DRV(cuLaunchKernel, "cuLaunchKernel"),
	DRV(cuMemAlloc, "cuMemAlloc_v2"),
	DRV(cuMemFree, "cuMemFree_v2"),
	DRV(cuMemAllocHost, "cuMemAllocHost_v2"),
	DRV(cuMemFreeHost, "cuMemFreeHost"),
	DRV(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
	DRV(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
	DRV(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
	DRV(cuStreamCreate, "cuStreamCreate"),
	DRV(cuStreamSynchronize, "cuStreamSynchronize"),
	DRV(cuStreamDestroy, "cuStreamDestroy_v2"),
	DRV(cuEventCreate, "cuEventCreate"),
	DRV(cuEventRecord, "cuEventRecord"),
	DRV(cuEventSynchronize, "cuEventSynchronize"),
	DRV(cuEventElapsedTime, "cuEventElapsedTime"),
	DRV(cuEventDestroy, "cuEventDestroy_v2"),
	RTC(nvrtcGetErrorString, "nvrtcGetErrorString"),
	RTC(nvrtcVersion, "nvrtcVersion"),
	RTC_OPT(nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs"),
	RTC_OPT(nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs"),
	RTC(nvrtcCreateProgram, "nvrtcCreateProgram"),
	RTC(nvrtcCompileProgram, "nvrtcCompileProgram"),
	RTC(nvrtcGetPTXSize, "nvrtcGetPTXSize"),
	RTC(nvrtcGetPTX, "nvrtcGetPTX"),
	RTC_OPT(nvrtcGetCUBINSize, "nvrtcGetCUBINSize"),
	RTC_OPT(nvrtcGetCUBIN, "nvrtcGetCUBIN"),
	RTC(nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize"),
	RTC(nvrtcGetProgramLog, "nvrtcGetProgramLog"),
	RTC(nvrtcDestroyProgram, "nvrtcDestroyProgram"),
#undef DRV
#undef RTC
#undef RTC_OPT
};

#define NSYMS (sizeof syms / sizeof syms[0])

// load opens path and resolves the entry points of lib; on failure nothing stays open and no
// slot is set.
static int load(const char *path, int lib, char *err, size_t errlen) {
	dlerror();
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "dlopen failed");
		return 1;
	}
	void *found[NSYMS];
	for (size_t i = 0; i < NSYMS; i++) {
		if (syms[i].lib != lib) {
			continue;
		}
		dlerror();
		found[i] = dlsym(h, syms[i].name);
		if (found[i] == NULL && !syms[i].optional) {
			snprintf(err, errlen, "%s: no symbol %s", path, syms[i].name);
			dlclose(h);
			return 1;
		}
	}
	for (size_t i = 0; i < NSYMS; i++) {
		if (syms[i].lib == lib) {
			*syms[i].slot = found[i];
		}
	}
	return 0; // the handle stays open for the life of the process
}

int gj_load_driver(const char *path, char *err, size_t errlen) { return load(path, LIB_DRIVER, err, errlen); }
int gj_load_nvrtc(const char *path, char *err, size_t errlen) { return load(path, LIB_NVRTC, err, errlen); }

// CALL forwards to the loaded entry point, or answers GJ_NOT_LOADED.
#define CALL(t, f, ...) return t.f ? t.f(__VA_ARGS__) : GJ_NOT_LOADED

gj_CUresult gj_cuGetErrorName(gj_CUresult r, const char **s) { CALL(drv, cuGetErrorName, r, s); }
gj_CUresult gj_cuGetErrorString(gj_CUresult r, const char **s) { CALL(drv, cuGetErrorString, r, s); }
gj_CUresult gj_cuInit(unsigned int flags) { CALL(drv, cuInit, flags); }
gj_CUresult gj_cuDriverGetVersion(int *v) { CALL(drv, cuDriverGetVersion, v); }
gj_CUresult gj_cuDeviceGetCount(int *n) { CALL(drv, cuDeviceGetCount, n); }
gj_CUresult gj_cuDeviceGet(gj_CUdevice *d, int ordinal) { CALL(drv, cuDeviceGet, d, ordinal); }
gj_CUresult gj_cuDeviceGetName(char *name, int len, gj_CUdevice d) { CALL(drv, cuDeviceGetName, name, len, d); }
gj_CUresult gj_cuDeviceGetAttribute(int *v, int attr, gj_CUdevice d) { CALL(drv, cuDeviceGetAttribute, v, attr, d); }
gj_CUresult gj_cuDevicePrimaryCtxRetain(gj_CUcontext *c, gj_CUdevice d) { CALL(drv, cuDevicePrimaryCtxRetain, c, d); }
gj_CUresult gj_cuDevicePrimaryCtxRelease(gj_CUdevice d) { CALL(drv, cuDevicePrimaryCtxRelease, d); }
gj_CUresult gj_cuCtxSetCurrent(gj_CUcontext c) { CALL(drv, cuCtxSetCurrent, c); }
gj_CUresult gj_cuModuleLoadData(gj_CUmodule *m, const void *image) { CALL(drv, cuModuleLoadData, m, image); }
gj_CUresult gj_cuModuleUnload(gj_CUmodule m) { CALL(drv, cuModuleUnload, m); }
gj_CUresult gj_cuModuleGetFunction(gj_CUfunction *f, gj_CUmodule m, const char *name) { CALL(drv, cuModuleGetFunction, f, m, name); }
gj_CUresult gj_cuMemAlloc(gj_CUdeviceptr *p, size_t n) { CALL(drv, cuMemAlloc, p, n); }
gj_CUresult gj_cuMemFree(gj_CUdeviceptr p) { CALL(drv, cuMemFree, p); }
gj_CUresult gj_cuMemAllocHost(void **p, size_t n) { CALL(drv, cuMemAllocHost, p, n); }
gj_CUresult gj_cuMemFreeHost(void *p) { CALL(drv, cuMemFreeHost, p); }
gj_CUresult gj_cuMemcpyHtoDAsync(gj_CUdeviceptr dst, const void *src, size_t n, gj_CUstream s) { CALL(drv, cuMemcpyHtoDAsync, dst, src, n, s); }
gj_CUresult gj_cuMemcpyDtoHAsync(void *dst, gj_CUdeviceptr src, size_t n, gj_CUstream s) { CALL(drv, cuMemcpyDtoHAsync, dst, src, n, s); }
gj_CUresult gj_cuMemcpyDtoDAsync(gj_CUdeviceptr dst, gj_CUdeviceptr src, size_t n, gj_CUstream s) { CALL(drv, cuMemcpyDtoDAsync, dst, src, n, s); }
gj_CUresult gj_cuStreamCreate(gj_CUstream *s, unsigned int flags) { CALL(drv, cuStreamCreate, s, flags); }
gj_CUresult gj_cuStreamSynchronize(gj_CUstream s) { CALL(drv, cuStreamSynchronize, s); }
gj_CUresult gj_cuStreamDestroy(gj_CUstream s) { CALL(drv, cuStreamDestroy, s); }
gj_CUresult gj_cuEventCreate(gj_CUevent *e, unsigned int flags) { CALL(drv, cuEventCreate, e, flags); }
gj_CUresult gj_cuEventRecord(gj_CUevent e, gj_CUstream s) { CALL(drv, cuEventRecord, e, s); }
gj_CUresult gj_cuEventSynchronize(gj_CUevent e) { CALL(drv, cuEventSynchronize, e); }
gj_CUresult gj_cuEventElapsedTime(float *ms, gj_CUevent start, gj_CUevent stop) { CALL(drv, cuEventElapsedTime, ms, start, stop); }
gj_CUresult gj_cuEventDestroy(gj_CUevent e) { CALL(drv, cuEventDestroy, e); }

gj_CUresult gj_launch(gj_CUfunction f, unsigned int gx, unsigned int bx, unsigned int shared,
                      gj_CUstream s, const unsigned long long *vals, int n) {
	void *params[32];
	if (drv.cuLaunchKernel == NULL) {
		return GJ_NOT_LOADED;
	}
	if (n < 0 || n > 32) {
		return 1; // CUDA_ERROR_INVALID_VALUE
	}
	for (int i = 0; i < n; i++) {
		params[i] = (void *)&vals[i]; // cuLaunchKernel copies the values before returning
	}
	return drv.cuLaunchKernel(f, gx, 1, 1, bx, 1, 1, shared, s, params, NULL);
}

const char *gj_nvrtcGetErrorString(gj_nvrtcResult r) {
	return rtc.nvrtcGetErrorString ? rtc.nvrtcGetErrorString(r) : "NVRTC not loaded";
}
gj_nvrtcResult gj_nvrtcVersion(int *major, int *minor) { CALL(rtc, nvrtcVersion, major, minor); }
gj_nvrtcResult gj_nvrtcGetNumSupportedArchs(int *n) { CALL(rtc, nvrtcGetNumSupportedArchs, n); }
gj_nvrtcResult gj_nvrtcGetSupportedArchs(int *archs) { CALL(rtc, nvrtcGetSupportedArchs, archs); }
gj_nvrtcResult gj_nvrtcCreateProgram(gj_nvrtcProgram *p, const char *src, const char *name) {
	CALL(rtc, nvrtcCreateProgram, p, src, name, 0, NULL, NULL);
}
gj_nvrtcResult gj_nvrtcCompileProgram(gj_nvrtcProgram p, int n, const char *const *options) { CALL(rtc, nvrtcCompileProgram, p, n, options); }
gj_nvrtcResult gj_nvrtcGetPTXSize(gj_nvrtcProgram p, size_t *n) { CALL(rtc, nvrtcGetPTXSize, p, n); }
gj_nvrtcResult gj_nvrtcGetPTX(gj_nvrtcProgram p, char *ptx) { CALL(rtc, nvrtcGetPTX, p, ptx); }
gj_nvrtcResult gj_nvrtcGetCUBINSize(gj_nvrtcProgram p, size_t *n) { CALL(rtc, nvrtcGetCUBINSize, p, n); }
gj_nvrtcResult gj_nvrtcGetCUBIN(gj_nvrtcProgram p, char *cubin) { CALL(rtc, nvrtcGetCUBIN, p, cubin); }
gj_nvrtcResult gj_nvrtcGetProgramLogSize(gj_nvrtcProgram p, size_t *n) { CALL(rtc, nvrtcGetProgramLogSize, p, n); }
gj_nvrtcResult gj_nvrtcGetProgramLog(gj_nvrtcProgram p, char *log) { CALL(rtc, nvrtcGetProgramLog, p, log); }
gj_nvrtcResult gj_nvrtcDestroyProgram(gj_nvrtcProgram *p) { CALL(rtc, nvrtcDestroyProgram, p); }
