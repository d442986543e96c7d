//go:build !amd64

package cpufeat

func detect() (avx, avx2 bool) { return false, false }
