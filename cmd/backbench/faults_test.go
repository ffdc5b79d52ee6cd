package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/stats"
)

// The faults' classes, the accounting and the connection notes are
// tested in internal/execute (faults_test.go); here, only what needs the
// command: the file --raw writes, and a process started under ulimit -n.

// TestRawFlag: --raw writes a header and one row per request, each with
// its class.
func TestRawFlag(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{BodyBytes: 10, Fault: fixtures.FaultShortBody})
	raw := filepath.Join(t.TempDir(), "raw.csv")
	code, _, errs := runMain(t, context.Background(), "bench", "-q", "--raw", raw, "-n", "4", "-c", "2", "-s", "3", srv.URL("/x"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	f, err := os.Open(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 5 || strings.Join(recs[0], ",")+"\n" != "intended_start,start,connect_ms,waiting_ms,total_ms,status,bytes,class\n" {
		t.Fatalf("--raw: %v, %q", err, recs)
	}
	for _, r := range recs[1:] {
		if r[7] != "receive" {
			t.Errorf("raw row %q: want class receive", r)
		}
	}
}

// TestFileLimitMidRun: dials that meet the file limit are Connect
// failures named in the notes; the binary runs under ulimit -n.
func TestFileLimitMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 300 * time.Millisecond})
	bin := buildBinary(t)
	// ulimit -n sets the hard limit too, so bench cannot raise it. The
	// limit is what -c 60 needs, so the run is not refused, but bench
	// inherits 100 open files more than a run counts on, so some dials
	// meet the limit.
	limit := execute.FilesNeeded(60)
	cmd := exec.Command("sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, limit), bin, "bench", "-q", "--format", "json", "-k", "-n", "60", "-c", "60", "-s", "5", srv.URL("/"))
	for range 100 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var s stats.Summary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	if s.Failures.Connect < 1 || s.Complete < 1 || s.Complete+s.Failed != 60 {
		t.Errorf("complete %d failures %+v %v", s.Complete, s.Failures, s.ErrorSamples)
	}
	if !notesHave(s.Notes, "too many open files") || !samplesHave(s.ErrorSamples, "too many open files") {
		t.Errorf("notes %q samples %v: no word of the file limit", s.Notes, s.ErrorSamples)
	}
}

func notesHave(notes []string, word string) bool {
	for _, n := range notes {
		if strings.Contains(n, word) {
			return true
		}
	}
	return false
}

func samplesHave(samples []stats.ErrorSample, word string) bool {
	for _, e := range samples {
		if strings.Contains(e.Message, word) {
			return true
		}
	}
	return false
}
