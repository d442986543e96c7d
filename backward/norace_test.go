//go:build !race

package backward_test

const raceEnabled = false
