//go:build !race

package gatetest

const raceEnabled = false
