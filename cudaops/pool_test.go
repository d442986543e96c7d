package cudaops

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
)

// fakeMem hands out numbered buffers and records what is live.
type fakeMem struct {
	mu   sync.Mutex
	next int
	live map[int]int64
	fail bool
}

func (m *fakeMem) alloc(n int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return 0, errors.New("out of memory")
	}
	m.next++
	if m.live == nil {
		m.live = map[int]int64{}
	}
	m.live[m.next] = n
	return m.next, nil
}

func (m *fakeMem) release(b int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.live[b]; !ok {
		return errors.New("double free")
	}
	delete(m.live, b)
	return nil
}

func TestPoolReusesBySizeClass(t *testing.T) {
	m := &fakeMem{}
	p := &pool[int]{alloc: m.alloc, release: m.release, maxIdle: 1 << 20}
	require.Equal(t, int64(256), class(0))
	require.Equal(t, int64(256), class(256))
	require.Equal(t, int64(512), class(257))
	require.Equal(t, int64(1<<20), class(1<<20-5))

	// A call's three buffers, then the same call again: the second allocates nothing.
	var got [3]int
	var cls [3]int64
	for i, n := range []int64{100, 4000, 4000} {
		b, c, err := p.get(n)
		require.NoError(t, err)
		got[i], cls[i] = b, c
		require.GreaterOrEqual(t, m.live[b], n)
	}
	for i := range got {
		require.NoError(t, p.put(got[i], cls[i]))
	}
	for _, n := range []int64{100, 4000, 4000} {
		_, _, err := p.get(n)
		require.NoError(t, err)
	}
	require.Equal(t, 3, p.allocs)
	require.Equal(t, 3, p.reuses)
	require.Len(t, m.live, 3)

	// Failure is reported and counts nothing.
	m.fail = true
	_, _, err := p.get(1 << 30)
	require.Error(t, err)
	require.Equal(t, 3, p.allocs)
}

func TestPoolBoundsIdleMemory(t *testing.T) {
	m := &fakeMem{}
	p := &pool[int]{alloc: m.alloc, release: m.release, maxIdle: 1024}
	var bs []int
	for range 8 {
		b, _, err := p.get(256)
		require.NoError(t, err)
		bs = append(bs, b)
	}
	for _, b := range bs {
		require.NoError(t, p.put(b, 256))
	}
	require.Equal(t, 4, p.dropped, "four 256-byte buffers fit in 1 KiB idle; the rest are released")
	require.Len(t, m.live, 4)
	require.NoError(t, p.drain())
	require.Empty(t, m.live, "drain releases every idle buffer")
	require.NoError(t, p.drain(), "draining twice is harmless")
}

func TestPoolConcurrent(t *testing.T) {
	m := &fakeMem{}
	p := &pool[int]{alloc: m.alloc, release: m.release, maxIdle: 1 << 16}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				b, c, err := p.get(int64(64 * (1 + (g+i)%7)))
				if err != nil {
					t.Error(err)
					return
				}
				if err := p.put(b, c); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, p.drain())
	require.Empty(t, m.live, "every buffer allocated was released exactly once")
}

// TestPoolRefusesSizesWithoutAClass: a request beyond the largest power-of-two class (2⁶²
// bytes; DeviceBackend.Time passes its copyBytes argument straight in) is an ErrSize error
// and allocates nothing, rather than looping forever while the class doubles past int64.
func TestPoolRefusesSizesWithoutAClass(t *testing.T) {
	m := &fakeMem{}
	p := &pool[int]{alloc: m.alloc, release: m.release, maxIdle: 1 << 20}
	for _, n := range []int64{1<<62 + 1, 1<<63 - 1} {
		done := make(chan error, 1)
		go func() {
			_, _, err := p.get(n)
			done <- err
		}()
		select {
		case err := <-done:
			require.ErrorIs(t, err, gatejet.ErrSize, "n=%d", n)
		case <-time.After(5 * time.Second):
			t.Fatalf("get(%d) did not return", n)
		}
	}
	require.Empty(t, m.live)
	_, c, err := p.get(1 << 62)
	require.NoError(t, err)
	require.Equal(t, int64(1<<62), c)
}
