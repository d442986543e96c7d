//go:build race

package backward

const raceOn = true
