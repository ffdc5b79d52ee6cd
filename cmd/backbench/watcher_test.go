package main

import (
	"os"
	"testing"

	"github.com/backbench/backbench/internal/backend"
)

// TestMain runs the tests, or, with backend.WatcherEnv set, is the
// watcher of a study run in-process (study starts this program again as
// its watcher, as main does).
func TestMain(m *testing.M) {
	if os.Getenv(backend.WatcherEnv) != "" {
		os.Exit(backend.WatcherMain())
	}
	code := m.Run()
	if studyBin.dir != "" {
		os.RemoveAll(studyBin.dir)
	}
	os.Exit(code)
}
