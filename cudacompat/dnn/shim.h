// The cuDNN entry points package cudnn calls, declared by hand and resolved with dlopen/dlsym
// by gjdnn_load; they are the same in cuDNN 8 and 9.
#ifndef GJ_CUDNN_SHIM_H
#define GJ_CUDNN_SHIM_H

#include <stddef.h>

typedef int gjdnn_status; // cudnnStatus_t: CUDNN_STATUS_SUCCESS = 0
typedef struct gjdnn_handle_st *gjdnn_handle;

#define GJDNN_NOT_LOADED (-1)

int gjdnn_load(const char *path, char *err, size_t errlen);
size_t gjdnn_version(void);
const char *gjdnn_error_string(gjdnn_status s);
gjdnn_status gjdnn_create(gjdnn_handle *h);
gjdnn_status gjdnn_destroy(gjdnn_handle h);

#endif
