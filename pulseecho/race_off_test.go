//go:build !race

package pulseecho_test

const raceEnabled = false
