//go:build race

package execute_test

// pacingRaceDetector reports that the tests run with the race detector,
// which slows the client's own code several times over.
const pacingRaceDetector = true
