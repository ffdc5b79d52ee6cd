package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/stats"
)

// mergeASLimit is the address-space limit (RLIMIT_AS) merge must work
// under. A trivial run of the binary (merge of an empty file) needs about
// 800 MiB of address space on amd64, nearly all of it reserved by the Go
// runtime at start (heap arena index, page summaries) and never touched:
// below 700 MiB the runtime dies before main ("failed to reserve page
// summary memory"). 1 GiB thus leaves about 200 MiB for the merge itself,
// where merging every record's histograms densely took 1.77 GB for 3,000
// records.
const mergeASLimit = 1 << 30

// savedRecords runs the built-in backend three times with different loads
// and returns the three bench JSON reports' records (as saved).
func savedRecords(t *testing.T) []json.RawMessage {
	t.Helper()
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	dir := t.TempDir()
	var out []json.RawMessage
	for i, n := range []string{"300", "500", "700"} {
		p := benchFile(t, dir, fmt.Sprintf("r%d.json", i), "-n", n, "-c", "2", srv.URL("/"))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Record json.RawMessage `json:"record"`
		}
		if err := json.Unmarshal(b, &rep); err != nil || rep.Record == nil {
			t.Fatalf("%s: no record: %v", p, err)
		}
		out = append(out, rep.Record)
	}
	return out
}

var startedAt = regexp.MustCompile(`"started_at": *([0-9]+)\.[0-9]+`)

// withStart returns the record raw with its start's microseconds set to
// us: another run as far as merge's identity check goes.
func withStart(t *testing.T, raw []byte, us int) []byte {
	t.Helper()
	if !startedAt.Match(raw) {
		t.Fatalf("no started_at in %.200s", raw)
	}
	return startedAt.ReplaceAll(raw, fmt.Appendf(nil, `"started_at": ${1}.%06d`, us))
}

// TestMergeTenThousandUnderASLimit merges 10,000 saved records (copies of
// three real runs, each with its own start) in one file under a 1 GiB
// address-space limit (prlimit on the built binary), and checks the
// totals: counts and sums are the copies' sums, and every phase's
// histogram is bucket for bucket the one of a dense merge of the same
// runs done with hdrhistogram's own Decode and Merge (so every percentile
// is the same).
func TestMergeTenThousandUnderASLimit(t *testing.T) {
	onceAcrossEngines(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit (util-linux) to limit the address space")
	}
	// Built without cgo, as the Dockerfile ships it: with cgo, every
	// thread's glibc malloc arena reserves 64 MiB of address space of its
	// own (MALLOC_ARENA_MAX), which is not merge's memory.
	bin := filepath.Join(t.TempDir(), "backbench")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	runs := savedRecords(t)
	const n = 10_000
	file := filepath.Join(t.TempDir(), "many.json")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	copies := make([]int64, len(runs))
	for i := range n {
		j := i % len(runs)
		copies[j]++
		w.Write(withStart(t, runs[j], i))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// The trivial run works under the limit: what fails below is merge.
	empty := filepath.Join(t.TempDir(), "empty.json")
	os.WriteFile(empty, nil, 0o644)
	if out, _ := exec.Command(prlimit, fmt.Sprintf("--as=%d", mergeASLimit), bin, "merge", empty).CombinedOutput(); !strings.Contains(string(out), "empty") {
		t.Fatalf("a trivial run fails under the limit: %s", out)
	}
	cmd := exec.Command(prlimit, fmt.Sprintf("--as=%d", mergeASLimit), bin, "merge", "-q", "--format", "json", file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("merge of %d records under RLIMIT_AS %d: %v\n%.2000s", n, mergeASLimit, err, stderr.String())
	}
	var m mergedRun
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("merge output: %v", err)
	}
	if len(m.Generators) != n || m.Generators[0].File != file+"#1" || m.Generators[n-1].File != fmt.Sprintf("%s#%d", file, n) {
		t.Errorf("%d generators (first %q), want %d named FILE#K", len(m.Generators), m.Generators[0].File, n)
	}

	// The known-correct way: dense histograms, hdr's own Merge.
	var want stats.Counts
	var wantPhases [4]stats.Moments
	var wantHist [4]*hdr.Histogram
	phases := []string{"connect", "processing", "waiting", "total"}
	for j, raw := range runs {
		var r stats.Record
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		var dense struct {
			Phases map[string]struct {
				Hist string `json:"histogram_us"`
			} `json:"phases"`
		}
		json.Unmarshal(raw, &dense)
		for range copies[j] {
			want.Merge(&r.Counts)
		}
		for p, name := range phases {
			h, err := hdr.Decode([]byte(dense.Phases[name].Hist))
			if err != nil {
				t.Fatal(err)
			}
			if wantHist[p] == nil {
				wantHist[p] = hdr.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
			}
			for range copies[j] {
				wantHist[p].Merge(h)
				wantPhases[p].Merge(&r.Phases[p].Moments)
			}
		}
	}
	if got := m.Record.Counts; got != want {
		t.Errorf("counts\n%+v, want\n%+v", got, want)
	}
	if m.Complete != want.Complete || m.Complete != 3334*300+3333*500+3333*700 {
		t.Errorf("complete %d, want %d", m.Complete, want.Complete)
	}
	for p, name := range phases {
		ph := &m.Record.Phases[p]
		if ph.Moments != wantPhases[p] {
			t.Errorf("%s moments %+v, want %+v", name, ph.Moments, wantPhases[p])
		}
		if !ph.Histogram().Equals(wantHist[p]) {
			t.Errorf("%s: the merged histogram is not the dense merge's", name)
		}
	}
	for _, q := range []float64{50, 90, 99} {
		v := float64(wantHist[3].ValueAtQuantile(q)) / 1e3
		v = min(max(v, float64(wantPhases[3].Min)/1e6), float64(wantPhases[3].Max)/1e6)
		if got := m.Percentiles[fmt.Sprint(q)]; got != v {
			t.Errorf("p%g = %g ms, want %g", q, got, v)
		}
	}
}
