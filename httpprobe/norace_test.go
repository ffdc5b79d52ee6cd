//go:build !race

package httpprobe

// raceEnabled reports a build with the race detector.
const raceEnabled = false
