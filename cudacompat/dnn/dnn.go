// Package cudnn is the part of gorgonia.org/cu/dnn that Gorgonia's cuda build uses: a cuDNN
// handle (Context, NewContext), which Gorgonia's CUDA engine creates for each device and closes
// with it. cuDNN is opened by dlopen at the first NewContext: libcudnn.so.9 or .8, the first
// that opens, or the file named by the environment variable GATEJET_CUDNN_LIB. No CUDA header
// is needed to build it, and none of cuDNN's operations is provided (Gorgonia's ops/nn uses
// them; gatejet's ops do not).
//
// NewContext never panics: where cuDNN cannot be opened or its handle cannot be created, the
// Context holds no handle and Err says why; Gorgonia's machines run without one, since only
// cuDNN's operations would use it.
package cudnn // import "gorgonia.org/cu/dnn"

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"
)

// LibEnv names an environment variable that, when set, is the path of the cuDNN library to open
// instead of those of Libs.
const LibEnv = "GATEJET_CUDNN_LIB"

// Libs are the cuDNN libraries tried in order.
var Libs = []string{"libcudnn.so.9", "libcudnn.so.8"}

// Status is a cudnnStatus_t: the error of a failed cuDNN call.
type Status int

func (s Status) Error() string {
	if t := C.gjdnn_error_string(C.gjdnn_status(s)); t != nil {
		return fmt.Sprintf("cudnn: %s (%d)", C.GoString(t), int(s))
	}
	return fmt.Sprintf("cudnn: status %d", int(s))
}

// LoadError is a cuDNN library that could not be opened: the loader's message for each file
// tried.
type LoadError struct{ Msgs []string }

func (e *LoadError) Error() string { return "cudnn: loading cuDNN: " + strings.Join(e.Msgs, "; ") }

var load = sync.OnceValue(func() error {
	libs := Libs
	if p := os.Getenv(LibEnv); p != "" {
		libs = []string{p}
	}
	var msgs []string
	for _, lib := range libs {
		clib := C.CString(lib)
		var msg [512]C.char
		r := C.gjdnn_load(clib, &msg[0], C.size_t(len(msg)))
		C.free(unsafe.Pointer(clib))
		if r == 0 {
			return nil
		}
		msgs = append(msgs, C.GoString(&msg[0]))
	}
	return &LoadError{Msgs: msgs}
})

// Version is the cuDNN version (90100 for 9.1.0), 0 when cuDNN cannot be opened.
func Version() int {
	if load() != nil {
		return 0
	}
	return int(C.gjdnn_version())
}

// Context is a cuDNN handle, or, when none could be made, why (Err).
type Context struct {
	mu  sync.Mutex
	h   C.gjdnn_handle
	err error
}

// NewContext opens cuDNN if need be and creates a handle (cudnnCreate, in the context current
// on the calling OS thread); see the package documentation for what happens when it cannot.
func NewContext() *Context {
	if err := load(); err != nil {
		return &Context{err: err}
	}
	var h C.gjdnn_handle
	if r := C.gjdnn_create(&h); r != 0 {
		return &Context{err: fmt.Errorf("cudnn: cudnnCreate: %w", Status(r))}
	}
	return &Context{h: h}
}

// Err is why the Context has no handle; nil when it has one, or was closed.
func (ctx *Context) Err() error {
	ctx.mu.Lock()
	defer ctx.mu.Unlock()
	return ctx.err
}

// Close destroys the handle; closing a Context without one does nothing.
func (ctx *Context) Close() error {
	ctx.mu.Lock()
	defer ctx.mu.Unlock()
	ctx.err = nil
	if ctx.h == nil {
		return nil
	}
	r := C.gjdnn_destroy(ctx.h)
	ctx.h = nil
	if r != 0 {
		return fmt.Errorf("cudnn: cudnnDestroy: %w", Status(r))
	}
	return nil
}
