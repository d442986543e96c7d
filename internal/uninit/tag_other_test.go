//go:build !purego

package uninit

const wantZeroed = false // runtime.mallocgc without clearing
