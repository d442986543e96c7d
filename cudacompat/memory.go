package cu

// #include "shim.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// DevicePtr is an address in device memory (a CUdeviceptr). It is a gorgonia.org/tensor
// Memory.
type DevicePtr uintptr

// String is the address in hexadecimal.
func (d DevicePtr) String() string { return fmt.Sprintf("0x%x", uintptr(d)) }

// Uintptr is the address.
func (d DevicePtr) Uintptr() uintptr { return uintptr(d) }

// IsCUDAMemory is true.
func (d DevicePtr) IsCUDAMemory() bool { return true }

// AddressRange is the allocation d lies in: its size and base (cuMemGetAddressRange, in the
// current context).
func (d DevicePtr) AddressRange() (size int64, base DevicePtr, err error) {
	if err := load(); err != nil {
		return 0, 0, err
	}
	var b C.gjcu_ptr
	var s C.size_t
	if err := check("cuMemGetAddressRange_v2", C.gjcu_MemGetAddressRange(&b, &s, C.gjcu_ptr(d))); err != nil {
		return 0, 0, err
	}
	return int64(s), DevicePtr(b), nil
}

// MemSize is the size of the allocation d lies in (AddressRange), 0 when the driver cannot
// say (no current context, or not device memory).
func (d DevicePtr) MemSize() uintptr {
	size, _, err := d.AddressRange()
	if err != nil {
		return 0
	}
	return uintptr(size)
}

// MemAttachFlags are the flags of cuMemAllocManaged.
type MemAttachFlags uint

// The attach flags (cuda.h).
const (
	AttachGlobal MemAttachFlags = 0x1
	AttachHost   MemAttachFlags = 0x2
	AttachSingle MemAttachFlags = 0x4
)

// sizeErr refuses a negative byte count before the driver sees it.
func sizeErr(n int64) error {
	if n < 0 {
		return InvalidValue
	}
	return nil
}

// MemInfo is the free and total memory of the current context's device.
func MemInfo() (free, total int64, err error) {
	if err := load(); err != nil {
		return 0, 0, err
	}
	var f, t C.size_t
	if err := check("cuMemGetInfo_v2", C.gjcu_MemGetInfo(&f, &t)); err != nil {
		return 0, 0, err
	}
	return int64(f), int64(t), nil
}

// MemAlloc allocates n bytes of device memory in the current context.
func MemAlloc(n int64) (DevicePtr, error) {
	if err := load(); err != nil {
		return 0, err
	}
	if err := sizeErr(n); err != nil {
		return 0, err
	}
	var p C.gjcu_ptr
	err := check("cuMemAlloc_v2", C.gjcu_MemAlloc(&p, C.size_t(n)))
	return DevicePtr(p), err
}

// MemAllocManaged allocates n bytes of managed memory (addressable from the host and every
// device) in the current context.
func MemAllocManaged(n int64, flags MemAttachFlags) (DevicePtr, error) {
	if err := load(); err != nil {
		return 0, err
	}
	if err := sizeErr(n); err != nil {
		return 0, err
	}
	var p C.gjcu_ptr
	err := check("cuMemAllocManaged", C.gjcu_MemAllocManaged(&p, C.size_t(n), C.uint(flags)))
	return DevicePtr(p), err
}

// MemFree frees what MemAlloc or MemAllocManaged allocated.
func MemFree(p DevicePtr) error {
	if err := load(); err != nil {
		return err
	}
	return check("cuMemFree_v2", C.gjcu_MemFree(C.gjcu_ptr(p)))
}

// MemcpyHtoD copies n bytes from host memory to the device and returns when they are copied.
func MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, n int64) error {
	if err := load(); err != nil {
		return err
	}
	if err := sizeErr(n); err != nil {
		return err
	}
	return check("cuMemcpyHtoD_v2", C.gjcu_MemcpyHtoD(C.gjcu_ptr(dst), src, C.size_t(n)))
}

// MemcpyDtoH copies n bytes from the device to host memory and returns when they are copied.
func MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, n int64) error {
	if err := load(); err != nil {
		return err
	}
	if err := sizeErr(n); err != nil {
		return err
	}
	return check("cuMemcpyDtoH_v2", C.gjcu_MemcpyDtoH(dst, C.gjcu_ptr(src), C.size_t(n)))
}

// MemcpyDtoD copies n bytes between device buffers.
func MemcpyDtoD(dst, src DevicePtr, n int64) error {
	if err := load(); err != nil {
		return err
	}
	if err := sizeErr(n); err != nil {
		return err
	}
	return check("cuMemcpyDtoD_v2", C.gjcu_MemcpyDtoD(C.gjcu_ptr(dst), C.gjcu_ptr(src), C.size_t(n)))
}

// Memcpy copies n bytes between two addresses of the unified address space.
func Memcpy(dst, src DevicePtr, n int64) error {
	if err := load(); err != nil {
		return err
	}
	if err := sizeErr(n); err != nil {
		return err
	}
	return check("cuMemcpy", C.gjcu_Memcpy(C.gjcu_ptr(dst), C.gjcu_ptr(src), C.size_t(n)))
}
