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

// Set at link time by make build (-ldflags "-X main.stampCommit=..."):
// the build info has no VCS settings when GOFLAGS says -buildvcs=false, as
// some machines and CI set it, so the Makefile stamps them itself. Empty
// when not stamped (go install, go build): then the build info's are used.
var (
	stampVersion  string // git describe --tags --dirty (empty without a tag)
	stampCommit   string // git rev-parse HEAD
	stampTime     string // the commit's time, RFC 3339
	stampModified string // "true" when the work tree had uncommitted changes
)

// versionLine is what --version prints: the module version, the commit and
// its time when the binary was built from a Git checkout, the Go version and
// the platform, all from the build info the Go toolchain embeds.
func versionLine() string {
	v, goVersion := buildVersion()
	return fmt.Sprintf("backbench %s %s %s/%s\n", v, goVersion, runtime.GOOS, runtime.GOARCH)
}

// version is backbench's version as a run record keeps it: the module
// version, and the commit and its time when known.
func version() string {
	v, _ := buildVersion()
	return v
}

// buildVersion reads the version (with commit, +modified and time when
// known) and the Go version from the build info.
func buildVersion() (string, string) {
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
	// What make build stamped wins: it is there even with -buildvcs=false.
	if stampCommit != "" {
		commit, when, dirty = stampCommit, stampTime, stampModified == "true"
	}
	if stampVersion != "" && (version == "" || version == "(devel)") {
		version = stampVersion
	}
	if version == "" {
		version = "(devel)"
	}
	line := version
	if commit != "" {
		line += " commit " + commit[:min(12, len(commit))]
		if dirty {
			line += "+modified"
		}
		if when != "" {
			line += " " + when
		}
	}
	return line, goVersion
}
