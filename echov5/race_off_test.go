//go:build !race

package echov5_test

const raceEnabled = false
