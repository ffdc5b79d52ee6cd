package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

const versionUsage = `Usage: backbench version

Prints backbench's version, the commit it was built from (with +modified for
uncommitted changes) and its time, the Go version and the platform, from the
build info. Also spelt backbench --version, backbench -V and bench -V (ab's).
`

// versionLine is what --version prints: the module version, the commit and
// its time when the binary was built from a Git checkout, the Go version and
// the platform, all from the build info the Go toolchain embeds.
func versionLine() string {
	version, commit, when, dirty, goVersion := "(unknown)", "", "", false, runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		version, goVersion = bi.Main.Version, bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if version == "" {
		version = "(devel)"
	}
	line := "backbench " + version
	if commit != "" {
		line += " commit " + commit[:min(12, len(commit))]
		if dirty {
			line += "+modified"
		}
		if when != "" {
			line += " " + when
		}
	}
	return fmt.Sprintf("%s %s %s/%s\n", line, goVersion, runtime.GOOS, runtime.GOARCH)
}
