// The one dlopen loader of cudacompat's three libraries (the driver, cuBLAS, cuDNN): each shim
// lists its entry points as a table and calls gj_dlload. A static function in a header, since
// the packages' C code is compiled per package.
#ifndef GJ_DLLOAD_H
#define GJ_DLLOAD_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
	void **slot;      // where the entry point goes
	const char *name; // its exported name
	int core;         // the library is refused without it
} gj_dlsym;

// gj_dlload opens the library at path and resolves every entry point of syms: nonzero, with a
// message in err, when the library cannot be opened or lacks a core entry point (nothing stays
// open then). Slots are written only on success; a missing non-core entry point is left NULL.
// The handle stays open for the life of the process.
static int gj_dlload(const char *path, const gj_dlsym *syms, size_t n, char *err, size_t errlen) {
	dlerror();
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "dlopen failed");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (syms[i].core && dlsym(h, syms[i].name) == NULL) {
			snprintf(err, errlen, "%s: no symbol %s", path, syms[i].name);
			dlclose(h);
			return 1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
	}
	return 0;
}

#endif
