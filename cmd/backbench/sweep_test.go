package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"html"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/testnet"
)

// sweepOut runs a sweep into a fresh directory and returns the exit status,
// stdout, stderr and the directory.
func sweepOut(t *testing.T, args ...string) (int, string, string, string) {
	t.Helper()
	dir := t.TempDir()
	code, out, errs := runMain(t, context.Background(), append([]string{"sweep", "--out", dir}, args...)...)
	return code, out, errs, dir
}

// readSweep checks the four output files and returns the decoded JSON and
// the CSV rows (header first).
func readSweep(t *testing.T, dir string) (report.Sweep, [][]string) {
	t.Helper()
	var sw report.Sweep
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sw); err != nil {
		t.Fatalf("sweep.json: %v", err)
	}
	// The JSON round-trips: re-encoding the decoded value gives the file.
	var again bytes.Buffer
	if err := document.Write(&again, &sw); err != nil || !bytes.Equal(again.Bytes(), b) {
		t.Errorf("sweep.json does not round-trip (%v)", err)
	}
	f, err := os.Open(filepath.Join(dir, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) == 0 || !reflect.DeepEqual(rows[0], report.SweepCSVHeader) {
		t.Fatalf("sweep.csv: %v %v", err, rows)
	}
	// The listen queue counters are read per level for a loopback TCP
	// target, and only then.
	network := map[string]string{}
	for _, se := range sw.Series {
		network[se.Label] = se.Target.Network
	}
	col := slices.Index(report.SweepCSVHeader, "listen_overflows")
	for _, r := range rows[1:] {
		if got, tcp := r[col] != "", network[r[0]] == "tcp"; got != tcp {
			t.Errorf("series %q (%s), level %s: listen_overflows %q", r[0], network[r[0]], r[1], r[col])
		}
	}
	pf, err := os.Open(filepath.Join(dir, "sweep.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	img, err := png.Decode(pf)
	failed, backend := false, false
	for _, se := range sw.Series {
		for _, l := range se.Levels {
			failed = failed || l.Failed > 0                                  // the failure-ratio panel
			backend = backend || (l.Backend != nil && l.Backend.Samples > 0) // the backend's CPU and memory panels
		}
	}
	height := report.ChartHeightPx
	if failed {
		height += report.PanelHeightPx
	}
	if backend {
		height += 2 * report.PanelHeightPx
	}
	if err != nil {
		t.Errorf("sweep.png: %v", err)
	} else if b := img.Bounds(); b.Dx() != report.ChartWidthPx || b.Dy() != height {
		t.Errorf("sweep.png is %v, want %dx%d", b, report.ChartWidthPx, height)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "sweep.svg"))
	if err != nil {
		t.Fatal(err)
	}
	var root struct{ XMLName xml.Name }
	if err := xml.Unmarshal(svg, &root); err != nil || root.XMLName.Local != "svg" {
		t.Errorf("sweep.svg: %v %v", err, root.XMLName)
	}
	for _, se := range sw.Series {
		if !bytes.Contains(svg, []byte(se.Label)) {
			t.Errorf("sweep.svg has no legend entry %q", se.Label)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "sweep.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) || !bytes.Contains(page, []byte("requests per second against concurrency")) {
		t.Errorf("sweep.html is not the sweep's page (%d bytes)", len(page))
	}
	for _, se := range sw.Series {
		if !bytes.Contains(page, []byte(html.EscapeString(se.Label))) {
			t.Errorf("sweep.html does not name series %q", se.Label)
		}
	}
	return sw, rows
}

// deadAddr returns a TCP address on which nothing listens, and that no
// server started meanwhile can take (testnet.DeadTCP).
func deadAddr(t *testing.T) string {
	return testnet.DeadTCP(t, "127.0.0.1")
}

// TestSweepUnreachable: a sweep of which no series reaches its target
// exits with the status of an unreachable target and writes no file
// (internal/sweep's TestLiveSweepUnreachable: every series named).
func TestSweepUnreachable(t *testing.T) {
	code, out, errs, dir := sweepOut(t, "-q", "-n", "5", "-c", "1", "a=http://"+deadAddr(t)+"/", "b=fcgi://"+deadAddr(t)+"/")
	if code != exitUnreachable || out != "" || !strings.Contains(errs, "a: ") || !strings.Contains(errs, "b: ") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("an unreachable sweep left files: %v", left)
	}
}

// TestSweepUsage: the flags' own errors exit with status 2 before any
// connection; one error of the plan shows that its errors do too (every
// rule of the sweep's options: internal/plan's TestSweepOptionsErrors).
func TestSweepUsage(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	u := srv.URL("/")
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct {
		name string
		args []string
		err  string
	}{
		{"no URL", []string{"-c", "1"}, "at least one URL"},
		{"no levels", []string{u}, "--concurrency SPEC is required"},
		{"bad rate", []string{"-c", "1", "--stop-error-rate", "1.5", u}, "bad --stop-error-rate"},
		{"bad percent", []string{"-c", "1", "--stop-error-rate", "x%", u}, "bad --stop-error-rate"},
		{"rate is bench's", []string{"-c", "1", "--rate", "10", u}, "unknown flag: --rate"},
		{"out is a file", []string{"-c", "1", "--out", file, u}, "cannot create"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"sweep", "-q"}, tc.args...)
			if !strings.HasPrefix(tc.name, "out") {
				args = append(args, "--out", t.TempDir())
			}
			before := srv.Accepted()
			code, _, errs := runMain(t, context.Background(), args...)
			if code != exitUsage || !strings.Contains(errs, tc.err) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, tc.err)
			}
			if srv.Accepted() != before {
				t.Error("a usage error connected to the target")
			}
		})
	}
}

// TestSweepProgress: on a terminal (pretended) and without -q, stderr gets
// a redrawn progress line that is erased at the end; stdout stays clean.
func TestSweepProgress(t *testing.T) {
	old, oldEvery := isTerminal, ProgressEvery
	isTerminal, ProgressEvery = func(io.Writer) bool { return true }, 5*time.Millisecond
	t.Cleanup(func() { isTerminal, ProgressEvery = old, oldEvery })
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: 5 * time.Millisecond})
	code, out, errs, _ := sweepOut(t, "-n", "30", "-c", "1,2", "s="+srv.URL("/"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"\r\x1b[Klevel 1/2 (c=1) s", "level 2/2 (c=2) s: ", "/30 requests, ETA "} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q: %q", want, errs)
		}
	}
	if !strings.HasSuffix(errs, "\r\x1b[K") || strings.Contains(out, "\r") {
		t.Errorf("progress not erased at the end, or on stdout: %q", errs[max(0, len(errs)-40):])
	}
	// -q: nothing on stderr even on a terminal.
	if code, _, errs, _ := sweepOut(t, "-q", "-n", "5", "-c", "1", srv.URL("/")); code != 0 || errs != "" {
		t.Errorf("-q: exit %d stderr %q", code, errs)
	}
}

// TestSweepLevelLines: a sweep whose stderr is not a terminal prints one
// line per finished level there; -q none.
func TestSweepLevelLines(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	code, _, errs := runMain(t, context.Background(), "sweep", "-c", "1,2,3", "-n", "30", "--out", t.TempDir(), "a="+srv.URL("/"), "b="+srv.URL("/"))
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	got := regexp.MustCompile(`(?m)^level (\d)/3 \(c=(\d)\) done, \d+\.\d s in$`).FindAllStringSubmatch(errs, -1)
	if len(got) != 3 {
		t.Fatalf("%d level lines, want 3:\n%s", len(got), errs)
	}
	for i, m := range got {
		if m[1] != strconv.Itoa(i+1) || m[2] != strconv.Itoa(i+1) {
			t.Errorf("line %d: %q", i, m[0])
		}
	}
	_, _, errs = runMain(t, context.Background(), "sweep", "-q", "-c", "1,2", "-n", "30", "--out", t.TempDir(), srv.URL("/"))
	if strings.Contains(errs, "level ") {
		t.Errorf("-q printed level lines:\n%s", errs)
	}
}

// TestSweepWritesFiles: one sweep writes its five files into --out and
// says so; the table and its files are the renderers' (the sweep's runs,
// pairs and texts: internal/sweep's TestLiveSweep tests).
func TestSweepWritesFiles(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{BodyBytes: 64})
	code, out, errs, dir := sweepOut(t, "-q", "-n", "20", "-c", "1,2", "--warmup", "0", "s="+srv.URL("/x.php"))
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr with -q: %q", code, errs)
	}
	sw, rows := readSweep(t, dir)
	if len(rows) != 1+2 || len(sw.Series) != 1 || sw.Series[0].Levels[1].Complete != 20 {
		t.Errorf("%d CSV rows, %d series", len(rows), len(sw.Series))
	}
	for _, want := range []string{"Sweep: 1 series, 2 levels, 20 requests per level", "Wrote " + filepath.Join(dir, "sweep.csv")} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}
