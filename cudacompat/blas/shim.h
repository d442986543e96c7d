// The cuBLAS entry points package cublas calls, declared by hand (no CUDA header is needed to
// build) and resolved with dlopen/dlsym by gjblas_load. The _v2 names are the ones cublas_v2.h
// maps the plain names to, exported by cuBLAS 11, 12 and 13.
#ifndef GJ_CUBLAS_SHIM_H
#define GJ_CUBLAS_SHIM_H

#include <stddef.h>

typedef int gjblas_status; // cublasStatus_t: CUBLAS_STATUS_SUCCESS = 0
typedef struct gjblas_handle_st *gjblas_handle;

#define GJBLAS_NOT_LOADED (-1)

// gjblas_load opens the library at path and resolves every entry point; nonzero with a
// message in err when that fails (nothing stays open then).
int gjblas_load(const char *path, char *err, size_t errlen);

gjblas_status gjblas_create(gjblas_handle *h);
gjblas_status gjblas_destroy(gjblas_handle h);
gjblas_status gjblas_get_version(gjblas_handle h, int *v);
// trans: 0 N, 1 T, 2 C (cublasOperation_t)
gjblas_status gjblas_dgemm(gjblas_handle h, int ta, int tb, int m, int n, int k, const double *alpha,
                           const double *a, int lda, const double *b, int ldb, const double *beta,
                           double *c, int ldc);
gjblas_status gjblas_sgemm(gjblas_handle h, int ta, int tb, int m, int n, int k, const float *alpha,
                           const float *a, int lda, const float *b, int ldb, const float *beta,
                           float *c, int ldc);
gjblas_status gjblas_dgemv(gjblas_handle h, int ta, int m, int n, const double *alpha, const double *a,
                           int lda, const double *x, int incx, const double *beta, double *y, int incy);
gjblas_status gjblas_sgemv(gjblas_handle h, int ta, int m, int n, const float *alpha, const float *a,
                           int lda, const float *x, int incx, const float *beta, float *y, int incy);
gjblas_status gjblas_dger(gjblas_handle h, int m, int n, const double *alpha, const double *x, int incx,
                          const double *y, int incy, double *a, int lda);
gjblas_status gjblas_sger(gjblas_handle h, int m, int n, const float *alpha, const float *x, int incx,
                          const float *y, int incy, float *a, int lda);

#endif
