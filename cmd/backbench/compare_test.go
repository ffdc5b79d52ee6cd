package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
)

// TestCompareExit: compare's outputs and exit statuses on saved runs:
// --format json is one comparison document, the text says what differs,
// --wide and --format markdown print the table; runs two factors apart
// are refused with one line and exit 2, and so is a bad --fail-on rule.
// (What compare pairs and judges: internal/compare's TestLiveCompare*
// tests.)
func TestCompareExit(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{BodyBytes: 5})
	unix := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 5})
	dir := t.TempDir()
	ft := benchFile(t, dir, "tcp.json", "-n", "10", "--repeat", "2", srv.URL("/x"))
	fu := benchFile(t, dir, "unix.json", "-n", "10", "--repeat", "2", unix.URL("/x"))
	fa := benchFile(t, dir, "a.json", "-n", "10", "--label", "a", srv.URL("/x"))
	fbu := benchFile(t, dir, "bu.json", "-n", "10", "--label", "b", unix.URL("/x"))
	ctx := context.Background()
	code, out, errs := runMain(t, ctx, "compare", "--format", "json", ft, fu)
	var r document.Comparison
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || len(r.Comparisons) == 0 || len(r.Differences) == 0 {
		t.Fatalf("compare --format json: exit %d %s\n%s", code, errs, out)
	}
	if code, out, _ := runMain(t, ctx, "compare", ft, fu); code != 0 || !strings.Contains(out, "transport: unix vs tcp") || !strings.Contains(out, "Differs:") {
		t.Errorf("compare text, exit %d:\n%s", code, out)
	}
	if code, out, _ := runMain(t, ctx, "compare", "--wide", ft, fu); code != 0 || !strings.Contains(out, "req/s") {
		t.Errorf("compare --wide, exit %d:\n%s", code, out)
	}
	if code, out, _ := runMain(t, ctx, "compare", "--format", "markdown", ft, fu); code != 0 || !strings.Contains(out, "req/s") || !strings.Contains(out, "|") {
		t.Errorf("compare --format markdown, exit %d:\n%s", code, out)
	}
	code, _, errs = runMain(t, ctx, "compare", fa, fbu)
	if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "more than one factor") {
		t.Errorf("compare of runs two factors apart: exit %d, %q: want 2 and one line", code, errs)
	}
	if code, _, errs := runMain(t, ctx, "compare", "--fail-on", "req/s slower on /b", ft, fu); code != exitUsage || !strings.Contains(errs, "p50 and p99 only") {
		t.Errorf("req/s on a target: exit %d %s, want 2", code, errs)
	}
}
