#include "shim.h"
#include "../dlload.h"

// Set once by gjdnn_load (serialised by the Go side) and read-only afterwards.
static struct {
	size_t (*version)(void);
	const char *(*error_string)(gjdnn_status);
	gjdnn_status (*create)(gjdnn_handle *);
	gjdnn_status (*destroy)(gjdnn_handle);
} lib;

static const gj_dlsym syms[] = {
	{(void **)&lib.version, "cudnnGetVersion", 1},
	{(void **)&lib.error_string, "cudnnGetErrorString", 1},
	{(void **)&lib.create, "cudnnCreate", 1},
	{(void **)&lib.destroy, "cudnnDestroy", 1},
};

#define NSYMS (sizeof syms / sizeof syms[0])

int gjdnn_load(const char *path, char *err, size_t errlen) {
	return gj_dlload(path, syms, NSYMS, err, errlen);
}

size_t gjdnn_version(void) { return lib.version ? lib.version() : 0; }
const char *gjdnn_error_string(gjdnn_status s) { return lib.error_string ? lib.error_string(s) : NULL; }
gjdnn_status gjdnn_create(gjdnn_handle *h) { return lib.create ? lib.create(h) : GJDNN_NOT_LOADED; }
gjdnn_status gjdnn_destroy(gjdnn_handle h) { return lib.destroy ? lib.destroy(h) : GJDNN_NOT_LOADED; }
