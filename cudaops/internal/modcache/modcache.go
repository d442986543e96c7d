// Package modcache compiles gatejet's kernel source into device modules and keeps them: one
// module per (module of the kernel table, element type, architecture), compiled once, for the
// architecture TargetArch picks, loaded from a CUBIN or PTX, and refused when its code is for
// another architecture. The device backend (build tag gatejetcuda) and cudadoer (build tag
// cuda) use it; it is pure Go and tested with fake compilers.
package modcache

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops/kernels"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/kernel"
)

// Compiler compiles CUDA C source to PTX. The device backend (build tag gatejetcuda) uses NVRTC;
// tests use fakes.
type Compiler interface {
	// Compile compiles src (named name in diagnostics) with the given options and returns
	// PTX text.
	Compile(src, name string, options []string) (ptx string, err error)
}

// Arch is a device's compute capability written as NVRTC spells a real architecture, e.g.
// "sm_90" for compute capability 9.0, or a virtual architecture, "compute_90", whose code is
// PTX that the driver compiles for the device.
type Arch string

// ArchLister is a Compiler that says which real architectures it compiles for (NVRTC's
// nvrtcGetSupportedArchs).
type ArchLister interface {
	SupportedArchs() ([]string, error)
}

// CUBINCompiler is a Compiler that also returns the device code of a real architecture
// (nvrtcGetCUBIN), which the driver loads without compiling PTX.
type CUBINCompiler interface {
	CompileCUBIN(src, name string, options []string) (ptx, cubin string, err error)
}

// archNumber is the number of an architecture, 90 for "sm_90", "sm_90a" and "compute_90";
// ok is false for a name that is neither form.
func archNumber(a Arch) (int, bool) {
	s := string(a)
	switch {
	case strings.HasPrefix(s, "sm_"):
		s = s[3:]
	case strings.HasPrefix(s, "compute_"):
		s = s[8:]
	default:
		return 0, false
	}
	n, i := 0, 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = 10*n + int(s[i]-'0')
	}
	return n, i > 0
}

// RealArch is the real architecture of a: "sm_90" for "compute_90" (the .target of its PTX).
func RealArch(a Arch) Arch {
	if n, ok := archNumber(a); ok {
		return Arch("sm_" + strconv.Itoa(n))
	}
	return a
}

// TargetArch picks what a module for a device of architecture device is compiled for, given
// the real architectures the compiler supports (nil: it does not say): the device's own
// architecture when the compiler supports it (real code, as a CUBIN where the compiler gives
// one); otherwise the newest supported architecture older than the device, as the virtual
// compute_XX (PTX, which the driver compiles for the newer device: PTX is
// forward-compatible). A device older than every supported architecture is an ErrDevice
// error: nothing this compiler makes runs on it.
func TargetArch(device Arch, supported []string) (Arch, error) {
	const op = "modcache.TargetArch"
	d, ok := archNumber(device)
	if !ok {
		return "", check.Errorf(gatejet.ErrDevice, op, "device", "not an architecture: %q", string(device))
	}
	if len(supported) == 0 {
		return device, nil
	}
	best := -1
	for _, s := range supported {
		n, ok := archNumber(Arch(s))
		if !ok {
			continue
		}
		if n == d {
			return Arch("sm_" + strconv.Itoa(d)), nil
		}
		if n < d && n > best {
			best = n
		}
	}
	if best < 0 {
		return "", check.Errorf(gatejet.ErrDevice, op, "device",
			"the device is %s, older than every architecture the compiler supports (%s … %s)", device, supported[0], supported[len(supported)-1])
	}
	return Arch("compute_" + strconv.Itoa(best)), nil
}

// ArchOf returns the Arch of compute capability major.minor.
func ArchOf(major, minor int) Arch { return Arch("sm_" + strconv.Itoa(major) + strconv.Itoa(minor)) }

// ModuleKey identifies one compiled module: the kernels of one module of the source (the
// kernel table's Device.Module, e.g. "SOFTMAX_JET") for one element type, compiled for one
// architecture.
type ModuleKey struct {
	Module string
	DType  kernel.DType
	Arch   Arch
}

// String returns e.g. "gatejet_softmax_jet_float64_sm_90", the module's name.
func (k ModuleKey) String() string {
	return "gatejet_" + strings.ToLower(k.Module) + "_" + k.DType.String() + "_" + string(k.Arch)
}

// moduleOf returns the module holding kernel k ("" for a kernel without device entry points).
func moduleOf(k kernel.ID) string {
	if s := k.Spec(); s != nil && s.Device != nil {
		return s.Device.Module
	}
	return ""
}

// CompileOptions returns the NVRTC options a module is built with: the device's own
// architecture, no fused multiply-add contraction (so that float64 results round like the
// CPU's), the family's kernels and the element type.
func CompileOptions(k ModuleKey) []string {
	return kernels.Options(string(k.Arch), k.Module, kernel.ModuleKernels(k.Module), k.DType == kernel.Float32)
}

var ptxTarget = regexp.MustCompile(`(?m)^\s*\.target\s+([A-Za-z0-9_]+)`)

// PTXTarget returns the architecture named by the PTX's .target directive ("" if none).
func PTXTarget(ptx string) Arch {
	m := ptxTarget.FindStringSubmatch(ptx)
	if m == nil {
		return ""
	}
	return Arch(m[1])
}

// Cache compiles and loads modules once per ModuleKey, for one device. It refuses any
// module whose PTX targets another architecture than its target (the device's own, or the
// older one TargetArch picked): such code would either fail to load or be compiled for the
// wrong machine, silently. It is safe for concurrent
// use; M is the loaded-module type (a cu.Module on the device).
type Cache[M any] struct {
	arch      Arch  // the device's
	target    Arch  // what modules are compiled for (TargetArch)
	targetErr error // why there is no target
	comp      Compiler
	load      func(key ModuleKey, ptx string) (M, error)
	unload    func(M) error

	mu       sync.Mutex
	mods     map[ModuleKey]M
	compiles int
}

// New returns a cache for a device of architecture arch, compiling with comp and
// loading with load; unload (may be nil) releases a module on Close. A cache without comp or
// load compiles nothing: its Get and Prewarm return ErrParam errors.
//
// Modules are compiled for TargetArch of the device and the architectures comp supports (when
// it is an ArchLister), and loaded from a CUBIN when the target is the device's own
// architecture and comp is a CUBINCompiler, from PTX otherwise; load receives that image.
func New[M any](arch Arch, comp Compiler, load func(ModuleKey, string) (M, error), unload func(M) error) *Cache[M] {
	c := &Cache[M]{arch: arch, target: arch, comp: comp, load: load, unload: unload, mods: map[ModuleKey]M{}}
	if l, ok := comp.(ArchLister); ok {
		supported, err := l.SupportedArchs()
		if err == nil {
			c.target, err = TargetArch(arch, supported)
		}
		c.targetErr = err
	}
	return c
}

// Target is the architecture the cache's modules are compiled for: the device's, or the
// virtual architecture of an older one (see TargetArch); "" for a nil *Cache.
func (c *Cache[M]) Target() Arch {
	if c == nil {
		return ""
	}
	return c.target
}

// Arch is the architecture the cache compiles for ("" for a nil *Cache).
func (c *Cache[M]) Arch() Arch {
	if c == nil {
		return ""
	}
	return c.arch
}

// usable reports an ErrParam error for a nil cache or one made without a compiler or a
// loader, which could compile or load nothing.
func (c *Cache[M]) usable(op string) error {
	switch {
	case c == nil:
		return check.Errorf(gatejet.ErrParam, op, "", "nil *Cache")
	case c.comp == nil:
		return check.Errorf(gatejet.ErrParam, op, "comp", "the cache was made without a Compiler (modcache.New)")
	case c.load == nil:
		return check.Errorf(gatejet.ErrParam, op, "load", "the cache was made without a load function (modcache.New)")
	case c.targetErr != nil:
		return check.Errorf(gatejet.ErrDevice, op, "", "no architecture to compile for: %v", c.targetErr)
	}
	return nil
}

// Get returns the module holding kernel k for element type dt, compiling and loading it on
// first use. Errors are ErrDevice errors, or ErrParam for a nil cache or one made without a
// compiler or a loader; a failed compile is not cached (a later Get tries again).
func (c *Cache[M]) Get(k kernel.ID, dt kernel.DType) (M, error) {
	var zero M
	if err := c.usable("modcache.Cache"); err != nil {
		return zero, err
	}
	if moduleOf(k) == "" || (dt != kernel.Float32 && dt != kernel.Float64) {
		return zero, check.Errorf(gatejet.ErrDevice, "modcache.Cache", "", "no module for kernel %v, dtype %v", k, dt)
	}
	return c.get(ModuleKey{Module: moduleOf(k), DType: dt, Arch: c.target})
}

func (c *Cache[M]) get(key ModuleKey) (M, error) {
	var zero M
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.mods[key]; ok {
		return m, nil
	}
	if key.Arch != c.target {
		return zero, check.Errorf(gatejet.ErrDevice, "modcache.Cache", "", "module %s is for %s, the cache compiles for %s", key, key.Arch, c.target)
	}
	c.compiles++
	var ptx, image string
	var err error
	if cc, ok := c.comp.(CUBINCompiler); ok && key.Arch == c.arch {
		ptx, image, err = cc.CompileCUBIN(kernels.Source, key.String()+".cu", CompileOptions(key))
	} else {
		ptx, err = c.comp.Compile(kernels.Source, key.String()+".cu", CompileOptions(key))
		image = ptx
	}
	if err != nil {
		return zero, check.Errorf(gatejet.ErrDevice, "modcache.Cache", "", "compiling %s: %v", key, err)
	}
	if got := PTXTarget(ptx); got != RealArch(c.target) {
		return zero, check.Errorf(gatejet.ErrDevice, "modcache.Cache", "",
			"refusing module %s: its PTX targets %q, not %s", key, string(got), RealArch(c.target))
	}
	m, err := c.load(key, image)
	if err != nil {
		return zero, check.Errorf(gatejet.ErrDevice, "modcache.Cache", "", "loading %s: %v", key, err)
	}
	c.mods[key] = m
	return m, nil
}

// Prewarm compiles and loads the modules of the given kernels (every kernel when none is
// given), for both element types. Errors are as Get's; an unknown kernel is an ErrParam error.
func (c *Cache[M]) Prewarm(kernels ...kernel.ID) error {
	if err := c.usable("cudaops.Prewarm"); err != nil {
		return err
	}
	if len(kernels) == 0 {
		kernels = deviceKernels()
	}
	seen := map[ModuleKey]bool{}
	var keys []ModuleKey
	for _, k := range kernels {
		if moduleOf(k) == "" {
			return check.Errorf(gatejet.ErrParam, "cudaops.Prewarm", "kernels", "kernel %v has no device entry points", k)
		}
		for _, dt := range []kernel.DType{kernel.Float32, kernel.Float64} {
			key := ModuleKey{Module: moduleOf(k), DType: dt, Arch: c.target}
			if !seen[key] {
				seen[key] = true
				keys = append(keys, key)
			}
		}
	}
	for _, key := range keys {
		if _, err := c.get(key); err != nil {
			return err
		}
	}
	return nil
}

// Loaded returns the keys of the modules loaded so far, sorted by name (none for a nil
// *Cache).
func (c *Cache[M]) Loaded() []ModuleKey {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]ModuleKey, 0, len(c.mods))
	for k := range c.mods {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Compiles is the number of compilations attempted so far (0 for a nil *Cache).
func (c *Cache[M]) Compiles() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.compiles
}

// Close unloads every module; the cache is empty afterwards. The first unload error is
// returned; closing a nil *Cache does nothing.
func (c *Cache[M]) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	for k, m := range c.mods {
		if c.unload != nil {
			if err := c.unload(m); err != nil && first == nil {
				first = fmt.Errorf("unloading %s: %w", k, err)
			}
		}
		delete(c.mods, k)
	}
	return first
}

// EntryPoints returns the names of the device functions the module of key holds: every
// kernel's, and its warp-per-row variant's where it has one (kernel.ModuleKernels).
func EntryPoints(key ModuleKey) []string {
	suffix := "_f64"
	if key.DType == kernel.Float32 {
		suffix = "_f32"
	}
	var out []string
	for _, stem := range kernel.ModuleKernels(key.Module) {
		out = append(out, "gj_"+stem+suffix)
	}
	return out
}

// DriverTooOld is the error of a module the driver refused as PTX of a newer ISA than it
// knows (CUDA_ERROR_UNSUPPORTED_PTX_VERSION): the compiler is newer than the driver. driver is
// the driver's CUDA version as cuDriverGetVersion reports it (11080 for 11.8), compiler the
// compiler's ("11.8").
func DriverTooOld(key ModuleKey, driver int, compiler string) error {
	return check.Errorf(gatejet.ErrDevice, "cudaops.DeviceBackend", "",
		"loading %s: the NVIDIA driver (CUDA %d.%d) refuses PTX from NVRTC %s, which is newer: "+
			"upgrade the driver to one for CUDA %s or later, or use an NVRTC no newer than CUDA %d.%d",
		key, driver/1000, driver%1000/10, compiler, compiler, driver/1000, driver%1000/10)
}

// deviceKernels returns every kernel of the table with device entry points.
func deviceKernels() []kernel.ID {
	var out []kernel.ID
	for _, k := range kernel.All() {
		if k.OnDevice() {
			out = append(out, k)
		}
	}
	return out
}

// Images compiles module images (PTX) once per ModuleKey for the whole process. An image
// depends on the key alone (the source, the module, the element type and the architecture),
// not on the engine or context that loads it, so every engine of every machine that runs
// the kernels on one architecture can load the same image: cudadoer keeps one Images, and
// loading stays per engine. It is safe for concurrent use; a compile holds the lock, so a
// module is compiled at most once however many engines ask for it at the same time.
type Images struct {
	comp Compiler

	mu       sync.Mutex
	ptx      map[ModuleKey]string
	compiles int
}

// NewImages returns an empty image cache that compiles with comp.
func NewImages(comp Compiler) *Images {
	return &Images{comp: comp, ptx: map[ModuleKey]string{}}
}

// Get returns the PTX of the module of key, compiling it on first use for key.Arch (a real
// architecture, or a virtual one; see TargetArch). A failed compile, or PTX whose .target is
// not RealArch(key.Arch), is an ErrDevice error and is not cached (a later Get tries again);
// a nil *Images, or one without a compiler, is an ErrParam error.
func (c *Images) Get(key ModuleKey) (string, error) {
	if c == nil || c.comp == nil {
		return "", check.Errorf(gatejet.ErrParam, "modcache.Images", "", "an image cache without a Compiler (modcache.NewImages)")
	}
	if len(EntryPoints(key)) == 0 || (key.DType != kernel.Float32 && key.DType != kernel.Float64) {
		return "", check.Errorf(gatejet.ErrDevice, "modcache.Images", "", "no module %s", key)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ptx, ok := c.ptx[key]; ok {
		return ptx, nil
	}
	c.compiles++
	ptx, err := c.comp.Compile(kernels.Source, key.String()+".cu", CompileOptions(key))
	if err != nil {
		return "", check.Errorf(gatejet.ErrDevice, "modcache.Images", "", "compiling %s: %v", key, err)
	}
	if got := PTXTarget(ptx); got != RealArch(key.Arch) {
		return "", check.Errorf(gatejet.ErrDevice, "modcache.Images", "",
			"refusing module %s: its PTX targets %q, not %s", key, string(got), RealArch(key.Arch))
	}
	c.ptx[key] = ptx
	return ptx, nil
}

// Compiles is the number of compilations attempted so far (0 for a nil *Images).
func (c *Images) Compiles() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.compiles
}
