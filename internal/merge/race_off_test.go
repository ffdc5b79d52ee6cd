//go:build !race

package merge_test

// mergeRaceDetector reports that the tests run with the race detector,
// under which decoding a large merged file takes minutes.
const mergeRaceDetector = false
