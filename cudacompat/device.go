package cu

// #include "shim.h"
import "C"

import "fmt"

// Device is a CUDA device ordinal (a CUdevice), or CPU.
type Device int

// The devices that are not a GPU.
const (
	CPU       Device = -1
	BadDevice Device = -2
)

// String is "CPU", "GPU(n)", or "Invalid Device".
func (d Device) String() string {
	switch {
	case d == CPU:
		return "CPU"
	case d < 0:
		return "Invalid Device"
	}
	return fmt.Sprintf("GPU(%d)", int(d))
}

// IsGPU reports whether d is a GPU ordinal.
func (d Device) IsGPU() bool { return d >= 0 }

// NumDevices is the number of CUDA devices; with no driver, 0 and the reason.
func NumDevices() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	var n C.int
	if err := check("cuDeviceGetCount", C.gjcu_DeviceGetCount(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// GetDevice returns the device of the given ordinal.
func GetDevice(ordinal int) (Device, error) {
	if err := load(); err != nil {
		return BadDevice, err
	}
	var d C.gjcu_device
	if err := check("cuDeviceGet", C.gjcu_DeviceGet(&d, C.int(ordinal))); err != nil {
		return BadDevice, err
	}
	return Device(d), nil
}

// Name is the device's name, e.g. "NVIDIA H100 80GB HBM3".
func (d Device) Name() (string, error) {
	if err := load(); err != nil {
		return "", err
	}
	var buf [256]C.char
	if err := check("cuDeviceGetName", C.gjcu_DeviceGetName(&buf[0], C.int(len(buf)), C.gjcu_device(d))); err != nil {
		return "", err
	}
	buf[len(buf)-1] = 0
	return C.GoString(&buf[0]), nil
}

// TotalMem is the device's memory in bytes.
func (d Device) TotalMem() (int64, error) {
	if err := load(); err != nil {
		return 0, err
	}
	var n C.size_t
	err := check("cuDeviceTotalMem_v2", C.gjcu_DeviceTotalMem(&n, C.gjcu_device(d)))
	return int64(n), err
}

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int

// The device attributes with a name here (cuda.h); any other value may be asked for too.
const (
	MaxThreadsPerBlock               DeviceAttribute = 1
	MaxBlockDimX                     DeviceAttribute = 2
	MaxBlockDimY                     DeviceAttribute = 3
	MaxBlockDimZ                     DeviceAttribute = 4
	MaxGridDimX                      DeviceAttribute = 5
	MaxGridDimY                      DeviceAttribute = 6
	MaxGridDimZ                      DeviceAttribute = 7
	MaxSharedMemoryPerBlock          DeviceAttribute = 8
	TotalConstantMemory              DeviceAttribute = 9
	WarpSize                         DeviceAttribute = 10
	MaxRegistersPerBlock             DeviceAttribute = 12
	ClockRate                        DeviceAttribute = 13
	MultiprocessorCount              DeviceAttribute = 16
	ComputeCapabilityMajor           DeviceAttribute = 75
	ComputeCapabilityMinor           DeviceAttribute = 76
	MaxSharedMemoryPerMultiprocessor DeviceAttribute = 81
	ManagedMemory                    DeviceAttribute = 83
	ConcurrentManagedAccess          DeviceAttribute = 89
)

// Attribute returns one attribute of the device.
func (d Device) Attribute(a DeviceAttribute) (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	var v C.int
	if err := check("cuDeviceGetAttribute", C.gjcu_DeviceGetAttribute(&v, C.int(a), C.gjcu_device(d))); err != nil {
		return 0, err
	}
	return int(v), nil
}

// Attributes returns the attributes of the device in the order asked, or the first error.
func (d Device) Attributes(attrs ...DeviceAttribute) ([]int, error) {
	vals := make([]int, len(attrs))
	for i, a := range attrs {
		v, err := d.Attribute(a)
		if err != nil {
			return nil, fmt.Errorf("cu: attribute %d of %v: %w", int(a), d, err)
		}
		vals[i] = v
	}
	return vals, nil
}

// ComputeCapability is the device's compute capability, 9 and 0 for sm_90.
func (d Device) ComputeCapability() (major, minor int, err error) {
	v, err := d.Attributes(ComputeCapabilityMajor, ComputeCapabilityMinor)
	if err != nil {
		return 0, 0, err
	}
	return v[0], v[1], nil
}

// MakeContext creates a context on the device (cuCtxCreate) and makes it current on the
// calling OS thread; the caller destroys it (Ctx.Close of CtxFromCUContext, or DestroyContext).
func (d Device) MakeContext(flags ContextFlags) (CUContext, error) {
	if err := load(); err != nil {
		return CUContext{}, err
	}
	var c C.gjcu_ctx
	if err := check("cuCtxCreate_v2", C.gjcu_CtxCreate(&c, C.uint(flags), C.gjcu_device(d))); err != nil {
		return CUContext{}, err
	}
	return CUContext{c}, nil
}
