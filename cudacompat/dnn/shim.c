#include <dlfcn.h>
#include <stdio.h>

#include "shim.h"

// Set once by gjdnn_load (serialised by the Go side) and read-only afterwards.
static struct {
	size_t (*version)(void);
	const char *(*error_string)(gjdnn_status);
	gjdnn_status (*create)(gjdnn_handle *);
	gjdnn_status (*destroy)(gjdnn_handle);
} lib;

static const struct {
	void **slot;
	const char *name;
} syms[] = {
	{(void **)&lib.version, "cudnnGetVersion"},
	{(void **)&lib.error_string, "cudnnGetErrorString"},
	{(void **)&lib.create, "cudnnCreate"},
	{(void **)&lib.destroy, "cudnnDestroy"},
};

#define NSYMS (sizeof syms / sizeof syms[0])

int gjdnn_load(const char *path, char *err, size_t errlen) {
	dlerror();
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "dlopen failed");
		return 1;
	}
	void *found[NSYMS];
	for (size_t i = 0; i < NSYMS; i++) {
		found[i] = dlsym(h, syms[i].name);
		if (found[i] == NULL) {
			snprintf(err, errlen, "%s: no symbol %s", path, syms[i].name);
			dlclose(h);
			return 1;
		}
	}
	for (size_t i = 0; i < NSYMS; i++) {
		*syms[i].slot = found[i];
	}
	return 0;
}

size_t gjdnn_version(void) { return lib.version ? lib.version() : 0; }
const char *gjdnn_error_string(gjdnn_status s) { return lib.error_string ? lib.error_string(s) : NULL; }
gjdnn_status gjdnn_create(gjdnn_handle *h) { return lib.create ? lib.create(h) : GJDNN_NOT_LOADED; }
gjdnn_status gjdnn_destroy(gjdnn_handle h) { return lib.destroy ? lib.destroy(h) : GJDNN_NOT_LOADED; }
