package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// mergedRun is the JSON of merge --format json for bench files.
type mergedRun struct {
	stats.Summary
	Record     *stats.Record      `json:"record"`
	Generators []report.Generator `json:"generators"`
	Merge      report.MergeInfo   `json:"merge"`
}

// benchFile runs bench with args and writes its JSON to dir/name.
func benchFile(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	code, out, errs := runMain(t, context.Background(), append([]string{"bench", "-q", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("bench %v: exit %d: %s", args, code, errs)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStartAtRefused checks the bad --start-at values: one line, exit 2,
// before any connection.
func TestStartAtRefused(t *testing.T) {
	now := time.Now()
	for _, v := range []string{
		now.Add(-3 * time.Second).UTC().Format(time.RFC3339),
		strconv.FormatInt(now.Add(-2*time.Second).Unix(), 10),
		strconv.FormatInt(now.UnixMilli(), 10), // milliseconds: far ahead
		"tomorrow", "12:00", "-5", "1.2.3",
	} {
		for _, cmd := range []string{"bench", "sweep"} {
			args := []string{cmd, "--start-at", v, "fcgi://127.0.0.1:1/"}
			if cmd == "sweep" {
				args = append(args[:3], "-c", "1", "fcgi://127.0.0.1:1/")
			}
			code, _, errs := runMain(t, context.Background(), args...)
			if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "start-at") {
				t.Errorf("%s --start-at %s: exit %d, stderr %q; want 2 and one line", cmd, v, code, errs)
			}
		}
	}
}

// TestParallelRecipe runs docs/scale-out.md's GNU parallel recipe with a
// stand-in for ssh that runs each "host's" command on this machine: three
// generators started with --nonall -j0 and the same --start-at, their JSON
// one after the other on parallel's stdout, merged as one file.
func TestParallelRecipe(t *testing.T) {
	parallel, err := exec.LookPath("parallel")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("GNU parallel is not installed (.ci/run installs it)")
		}
		t.Skip("GNU parallel is not installed")
	}
	bin := buildBinary(t)
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{})
	dir := t.TempDir()
	ssh := filepath.Join(dir, "ssh")
	// ssh [options] HOST [--] COMMAND: run COMMAND here, with SHELL set as
	// sshd sets it from the login (parallel's remote wrapper runs the
	// command with $SHELL, and a CI runner may have none).
	script := "#!/bin/bash\nexport SHELL=/bin/bash\nwhile [ $# -gt 0 ]; do case \"$1\" in -*) shift;; *) break;; esac; done\n" +
		"shift; [ \"$1\" = -- ] && shift\nexec bash -c \"$*\"\n"
	if err := os.WriteFile(ssh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// The generators start together at a time a few seconds ahead; on a
	// loaded machine parallel itself may take longer than that to start
	// them, so a start refused as past is tried again with twice the lead.
	runs := filepath.Join(dir, "runs.json")
	var out string
	for lead := 4 * time.Second; ; lead *= 2 {
		at := time.Now().Add(lead).Unix()
		cmd := exec.Command(parallel, "-j0", "--nonall", "--sshlogin", "gen1,gen2,gen3", "--ssh", ssh,
			"backbench", "bench", "-q", "--format", "json", "--start-at", strconv.FormatInt(at, 10), "-t", "1", "-c", "2", srv.URL("/"))
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "HOME="+dir)
		f, err := os.Create(runs)
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = f, &stderr
		err = cmd.Run()
		f.Close()
		out = stderr.String()
		if err != nil && strings.Contains(out, "in the past") && lead < 30*time.Second {
			t.Logf("started late with a lead of %v: %s", lead, stderr.String())
			continue
		}
		if err != nil {
			t.Fatalf("parallel: %v\n%s", err, stderr.String())
		}
		break
	}
	code, text, errs := runMain(t, context.Background(), "merge", "--format", "json", runs)
	var m mergedRun
	if err := json.Unmarshal([]byte(text), &m); code != 0 || err != nil {
		t.Fatalf("merge: exit %d, %v, %s\nparallel's stderr:\n%s", code, err, errs, out)
	}
	var sum int64
	for _, g := range m.Generators {
		sum += g.Complete
	}
	if m.Complete != sum || m.Complete < 100 || len(m.Generators) != 3 || len(m.Merge.Warnings) != 0 {
		t.Errorf("merged %d requests from %d generators (%d), overlap %.2f, warnings %q; want 3 that ran together",
			m.Complete, len(m.Generators), sum, m.Merge.Overlap, m.Merge.Warnings)
	}
}

// TestMergeCLI checks merge's own pieces (the merge itself is
// internal/merge's tests): a refusal is exit 2 and one line, a forced merge
// and runs one after the other warn on stderr, -e writes the percentiles
// file, --format json writes the merged run, bad arguments are exit 2 and
// one line; and sweep's --start-at holds the first level until TIME.
func TestMergeCLI(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	a := benchFile(t, dir, "a.json", "-n", "200", "-c", "2", srv.URL("/"))
	b := benchFile(t, dir, "b.json", "-n", "300", "-c", "2", srv.URL("/"))
	c4 := benchFile(t, dir, "c4.json", "-n", "200", "-c", "4", srv.URL("/"))
	if code, out, errs := runMain(t, context.Background(), "merge", a, c4); code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--force") {
		t.Errorf("merge of two plans: exit %d, stderr %q, want 2 and one line", code, errs)
	}
	if code, out, errs := runMain(t, context.Background(), "merge", "--force", a, c4); code != 0 || !strings.Contains(out, "Merge forced:") ||
		!strings.Contains(errs, "warning: merged with --force") {
		t.Errorf("merge --force: exit %d, %s\n%s", code, errs, out)
	}
	csvFile := filepath.Join(dir, "pct.csv")
	code, out, errs := runMain(t, context.Background(), "merge", "-e", csvFile, a, b)
	if code != 0 || !strings.Contains(out, "Complete requests:      500\n") || !strings.Contains(errs, "overlap for only") {
		t.Errorf("merge of runs one after the other: exit %d, stderr %q\n%s", code, errs, out)
	}
	if f, err := os.ReadFile(csvFile); err != nil || strings.Count(string(f), "\n") != 102 {
		t.Errorf("merge -e: %v\n%s", err, f)
	}
	code, out, _ = runMain(t, context.Background(), "merge", "-q", "--format", "json", a, b)
	var m mergedRun
	if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil || m.Complete != 500 || len(m.Generators) != 2 || len(m.Merge.Warnings) == 0 {
		t.Errorf("merge --format json: exit %d, %v, %+v", code, err, m.Merge)
	}
	for _, args := range [][]string{{}, {filepath.Join(dir, "missing.json")}, {"--format", "xml", a}, {a, dir + "/./a.json"}} {
		code, out, errs := runMain(t, context.Background(), append([]string{"merge"}, args...)...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
			t.Errorf("merge %v: exit %d, stdout %q, stderr %q; want 2 and one line", args, code, out, errs)
		}
	}

	// sweep --start-at held the first level (its warm-up first) until TIME.
	at := time.Now().Add(500 * time.Millisecond)
	sweepDir := filepath.Join(dir, "sweep")
	if code, _, errs := runMain(t, context.Background(), "sweep", "-q", "-c", "1", "-n", "20", "--start-at", at.Format(time.RFC3339Nano),
		"--out", sweepDir, "A="+srv.URL("/")); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	var sw report.Sweep
	if data, _ := os.ReadFile(filepath.Join(sweepDir, "sweep.json")); json.Unmarshal(data, &sw) != nil || len(sw.Series) == 0 || len(sw.Series[0].Records) == 0 {
		t.Fatalf("sweep.json: %s", data)
	} else if st := sw.Series[0].Records[0].StartedAt.Time; st.Before(at) {
		t.Errorf("the first level started at %v, before --start-at %v", st, at)
	}
}
