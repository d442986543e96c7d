//go:build !race

package softmaxjet

const raceEnabled = false
