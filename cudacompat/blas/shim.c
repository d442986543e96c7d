#include "shim.h"
#include "../dlload.h"

// Set once by gjblas_load (serialised by the Go side) and read-only afterwards.
static struct {
	gjblas_status (*create)(gjblas_handle *);
	gjblas_status (*destroy)(gjblas_handle);
	gjblas_status (*get_version)(gjblas_handle, int *);
	gjblas_status (*dgemm)(gjblas_handle, int, int, int, int, int, const double *, const double *, int,
	                       const double *, int, const double *, double *, int);
	gjblas_status (*sgemm)(gjblas_handle, int, int, int, int, int, const float *, const float *, int,
	                       const float *, int, const float *, float *, int);
	gjblas_status (*dgemv)(gjblas_handle, int, int, int, const double *, const double *, int, const double *,
	                       int, const double *, double *, int);
	gjblas_status (*sgemv)(gjblas_handle, int, int, int, const float *, const float *, int, const float *,
	                       int, const float *, float *, int);
	gjblas_status (*dger)(gjblas_handle, int, int, const double *, const double *, int, const double *, int,
	                      double *, int);
	gjblas_status (*sger)(gjblas_handle, int, int, const float *, const float *, int, const float *, int,
	                      float *, int);
} lib;

static const gj_dlsym syms[] = {
	{(void **)&lib.create, "cublasCreate_v2", 1},
	{(void **)&lib.destroy, "cublasDestroy_v2", 1},
	{(void **)&lib.get_version, "cublasGetVersion_v2", 1},
	{(void **)&lib.dgemm, "cublasDgemm_v2", 1},
	{(void **)&lib.sgemm, "cublasSgemm_v2", 1},
	{(void **)&lib.dgemv, "cublasDgemv_v2", 1},
	{(void **)&lib.sgemv, "cublasSgemv_v2", 1},
	{(void **)&lib.dger, "cublasDger_v2", 1},
	{(void **)&lib.sger, "cublasSger_v2", 1},
};

#define NSYMS (sizeof syms / sizeof syms[0])

int gjblas_load(const char *path, char *err, size_t errlen) {
	return gj_dlload(path, syms, NSYMS, err, errlen);
}

#define CALL(f, ...) return lib.f ? lib.f(__VA_ARGS__) : GJBLAS_NOT_LOADED

gjblas_status gjblas_create(gjblas_handle *h) { CALL(create, h); }
gjblas_status gjblas_destroy(gjblas_handle h) { CALL(destroy, h); }
gjblas_status gjblas_get_version(gjblas_handle h, int *v) { CALL(get_version, h, v); }
gjblas_status gjblas_dgemm(gjblas_handle h, int ta, int tb, int m, int n, int k, const double *alpha,
                           const double *a, int lda, const double *b, int ldb, const double *beta,
                           double *c, int ldc) {
	CALL(dgemm, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
gjblas_status gjblas_sgemm(gjblas_handle h, int ta, int tb, int m, int n, int k, const float *alpha,
                           const float *a, int lda, const float *b, int ldb, const float *beta,
                           float *c, int ldc) {
	CALL(sgemm, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
gjblas_status gjblas_dgemv(gjblas_handle h, int ta, int m, int n, const double *alpha, const double *a,
                           int lda, const double *x, int incx, const double *beta, double *y, int incy) {
	CALL(dgemv, h, ta, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
gjblas_status gjblas_sgemv(gjblas_handle h, int ta, int m, int n, const float *alpha, const float *a,
                           int lda, const float *x, int incx, const float *beta, float *y, int incy) {
	CALL(sgemv, h, ta, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
gjblas_status gjblas_dger(gjblas_handle h, int m, int n, const double *alpha, const double *x, int incx,
                          const double *y, int incy, double *a, int lda) {
	CALL(dger, h, m, n, alpha, x, incx, y, incy, a, lda);
}
gjblas_status gjblas_sger(gjblas_handle h, int m, int n, const float *alpha, const float *x, int incx,
                          const float *y, int incy, float *a, int lda) {
	CALL(sger, h, m, n, alpha, x, incx, y, incy, a, lda);
}
