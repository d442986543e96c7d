//go:build linux

package softmaxjet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/internal/testkit"
)

// TestGateStaysInBounds: the AVX gate's tail (masked loads and stores of the last K mod 4
// atoms) touches nothing past l[K−1] or z[K−1]: with both ending against an unmapped page, a
// lane read or written past them would fault.
func TestGateStaysInBounds(t *testing.T) {
	testkit.RequireAVX(t, "gate", hasAVX, &useAVX)
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 4*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer syscall.Munmap(mem)
	require.NoError(t, syscall.Mprotect(mem[page:2*page], syscall.PROT_NONE))
	require.NoError(t, syscall.Mprotect(mem[3*page:], syscall.PROT_NONE))
	zEnd, lEnd := unsafe.Pointer(&mem[page]), unsafe.Pointer(&mem[3*page])
	rng := rand.New(rand.NewPCG(49, 50))
	for K := 1; K <= 70; K++ {
		z := unsafe.Slice((*float64)(unsafe.Add(zEnd, -8*K)), K)
		l64 := unsafe.Slice((*float64)(unsafe.Add(lEnd, -8*K)), K)
		l32 := unsafe.Slice((*float32)(unsafe.Add(lEnd, -4*K)), K)
		for k := range K {
			l64[k] = rng.NormFloat64()
		}
		gateInBounds(t, z, l64, fmt.Sprintf("f64 K=%d", K))
		for k := range K {
			l32[k] = float32(rng.NormFloat64())
		}
		gateInBounds(t, z, l32, fmt.Sprintf("f32 K=%d", K))
	}
}

func gateInBounds[T Float](t *testing.T, z []float64, l []T, name string) {
	K := len(l)
	want := make([]float64, K)
	gateGo(want, l, 1.7, K)
	useAVX = true
	gateVec(z, l, 1.7, K)
	for k := range want {
		require.Equal(t, math.Float64bits(want[k]), math.Float64bits(z[k]), "%s: z[%d]", name, k)
	}
}
