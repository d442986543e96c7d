//go:build !race

package backward

const raceOn = false
