package backward

import (
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"

	"github.com/gatejet/gatejet/internal/testkit"
)

// TestForwardLoopsStayInBounds: the vector loops of the last-axis softmax forward (maxLanes,
// expSumLanes, expLanes, scaleLanes) read and write nothing outside their slices: each slice
// ends at a page that cannot be read or written, or starts just after one, for every length
// from 0 to 70, float64 and float32; their results are the Go loops' bits.
func TestForwardLoopsStayInBounds(t *testing.T) {
	testkit.RequireAVX(t, "forward loops", hasAVX && hasAVX2, &useAVX)
	page := syscall.Getpagesize()
	// pages: 0 guard, 1 data, 2 guard, 3 data, 4 guard, 5 data, 6 guard
	mem, err := syscall.Mmap(-1, 0, 7*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	for _, g := range []int{0, 2, 4, 6} {
		if err := syscall.Mprotect(mem[g*page:(g+1)*page], syscall.PROT_NONE); err != nil {
			t.Fatal(err)
		}
	}
	base := unsafe.Pointer(&mem[0])
	at := func(pg int, end bool, bytes int) unsafe.Pointer {
		if end {
			return unsafe.Add(base, (pg+1)*page-bytes)
		}
		return unsafe.Add(base, pg*page)
	}
	rng := rand.New(rand.NewPCG(61, 62))
	for n := 0; n <= 70; n++ {
		for _, end := range []bool{true, false} {
			e := unsafe.Slice((*float64)(at(1, end, 8*n)), n)
			x64 := unsafe.Slice((*float64)(at(3, end, 8*n)), n)
			x32 := unsafe.Slice((*float32)(at(3, end, 4*n)), n)
			y64 := unsafe.Slice((*float64)(at(5, end, 8*n)), n)
			y32 := unsafe.Slice((*float32)(at(5, end, 4*n)), n)
			name := fmt.Sprintf("n=%d end=%v", n, end)
			for i := range n {
				x64[i] = 3 * rng.NormFloat64()
			}
			forwardInBounds(t, e, x64, y64, name+" f64")
			for i := range n {
				x32[i] = float32(3 * rng.NormFloat64())
			}
			forwardInBounds(t, e, x32, y32, name+" f32")
		}
	}
}

func forwardInBounds[T Float](t *testing.T, e []float64, x, y []T, name string) {
	t.Helper()
	n := len(x)
	run := func(vec bool) (m [4]float64, s float64, ex []float64, ys []T) {
		useAVX = vec
		defer func() { useAVX = true }()
		m[0], m[1], m[2], m[3] = maxLanes(x)
		s = expSum(e, x, 0.5)
		ex = append([]float64(nil), e...)
		for i := range e {
			e[i] = float64(x[i])
		}
		expOf(e, e)
		ex = append(ex, e...)
		for i := scaleLanes(y, e, 0.7); i < n; i++ {
			y[i] = T(e[i] * 0.7)
		}
		return m, s, ex, append([]T(nil), y...)
	}
	m0, s0, e0, y0 := run(false)
	m1, s1, e1, y1 := run(true)
	if m0 != m1 || math.Float64bits(s0) != math.Float64bits(s1) {
		t.Fatalf("%s: max lanes %v / %v, sums %v / %v", name, m0, m1, s0, s1)
	}
	for i := range e0 {
		if math.Float64bits(e0[i]) != math.Float64bits(e1[i]) {
			t.Fatalf("%s: exp [%d] %v / %v", name, i, e0[i], e1[i])
		}
	}
	for i := range y0 {
		if y0[i] != y1[i] {
			t.Fatalf("%s: y [%d] %v / %v", name, i, y0[i], y1[i])
		}
	}
}
