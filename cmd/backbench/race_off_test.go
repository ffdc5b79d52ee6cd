//go:build !race

package main

// raceDetector reports that the tests run with the race detector, which
// slows the client's own code several times over.
const raceDetector = false
