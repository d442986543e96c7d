//go:build purego

package uninit

const wantZeroed = true // a plain make
