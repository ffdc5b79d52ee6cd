package merge_test

// The merge's memory bounds, measured on a process of its own: the
// program testdata/mergecmd (merge.Merge, then document.Write, as backbench
// merge --format json does), built without cgo and without the race
// detector, so that its address space and resident set are the merge's.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/recorder"
	"github.com/backbench/backbench/internal/stats"
)

// mergeOnceAcrossEngines skips a test in make test's second pass
// (BACKBENCH_ENGINE set): the test measures what is made of saved runs,
// which the engine does not change.
func mergeOnceAcrossEngines(t *testing.T) {
	t.Helper()
	if os.Getenv(execute.EngineEnv) != "" {
		t.Skip("runs once, with the default engine: it tests what is made of the runs, not the load path")
	}
}

// mergeCmd is the built testdata/mergecmd, or why it could not be built.
var mergeCmd struct {
	once sync.Once
	path string
	err  error
}

// mergeCmdBinary builds testdata/mergecmd once, without cgo (as the
// Dockerfile builds backbench: with cgo, every thread's glibc malloc arena
// reserves 64 MiB of address space of its own, which is not merge's
// memory) and without the race detector, and returns its path.
func mergeCmdBinary(t *testing.T) string {
	t.Helper()
	mergeCmd.once.Do(func() {
		dir, err := os.MkdirTemp("", "mergecmd")
		if err != nil {
			mergeCmd.err = err
			return
		}
		mergeCmd.path = filepath.Join(dir, "mergecmd")
		cmd := exec.Command("go", "build", "-trimpath", "-o", mergeCmd.path, "./testdata/mergecmd")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			mergeCmd.err = fmt.Errorf("go build ./testdata/mergecmd: %v\n%s", err, out)
		}
	})
	if mergeCmd.err != nil {
		t.Fatal(mergeCmd.err)
	}
	return mergeCmd.path
}

// TestMain removes the built mergecmd after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if mergeCmd.path != "" {
		os.RemoveAll(filepath.Dir(mergeCmd.path))
	}
	os.Exit(code)
}

// mergeASLimit is the address-space limit (RLIMIT_AS) merge must work
// under. A trivial run of backbench (merge of an empty file) needs about
// 800 MiB of address space on amd64, nearly all of it reserved by the Go
// runtime at start (heap arena index, page summaries) and never touched:
// below 700 MiB the runtime dies before main ("failed to reserve page
// summary memory"). 1 GiB thus leaves about 200 MiB for the merge itself,
// where merging every record's histograms densely took 1.77 GB for 3,000
// records.
const mergeASLimit = 1 << 30

// mergeSavedRecords runs the built-in backend three times with different
// loads and returns the three bench JSON reports' records (as saved).
func mergeSavedRecords(t *testing.T) []json.RawMessage {
	t.Helper()
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	var out []json.RawMessage
	for _, n := range []int64{300, 500, 700} {
		b, err := genRun(t, genPlan(t, srv.URL("/"), func(p *execute.Plan) { p.Requests, p.Concurrency = n, 2 }), execute.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Record json.RawMessage `json:"record"`
		}
		if err := json.Unmarshal(b, &rep); err != nil || rep.Record == nil {
			t.Fatalf("run of %d: no record: %v", n, err)
		}
		out = append(out, rep.Record)
	}
	return out
}

var mergeStartedAt = regexp.MustCompile(`"started_at": *([0-9]+)\.[0-9]+`)

// mergeWithStart returns the record raw with its start's microseconds set to
// us: another run as far as merge's identity check goes.
func mergeWithStart(t *testing.T, raw []byte, us int) []byte {
	t.Helper()
	if !mergeStartedAt.Match(raw) {
		t.Fatalf("no started_at in %.200s", raw)
	}
	return mergeStartedAt.ReplaceAll(raw, fmt.Appendf(nil, `"started_at": ${1}.%06d`, us))
}

// TestMergeTenThousandUnderASLimit merges 10,000 saved records (copies of
// three real runs, each with its own start) in one file under a 1 GiB
// address-space limit (prlimit on the built testdata/mergecmd, a process
// that merges as backbench merge --format json does), and checks the
// totals: counts and sums are the copies' sums, and every phase's
// histogram is bucket for bucket the one of a dense merge of the same
// runs done with hdrhistogram's own Decode and Merge (so every percentile
// is the same).
func TestMergeTenThousandUnderASLimit(t *testing.T) {
	mergeOnceAcrossEngines(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit (util-linux) to limit the address space")
	}
	bin := mergeCmdBinary(t)
	runs := mergeSavedRecords(t)
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
		w.Write(mergeWithStart(t, runs[j], i))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// The trivial run works under the limit: what fails below is merge.
	empty := filepath.Join(t.TempDir(), "empty.json")
	os.WriteFile(empty, nil, 0o644)
	if out, _ := exec.Command(prlimit, fmt.Sprintf("--as=%d", mergeASLimit), bin, empty).CombinedOutput(); !strings.Contains(string(out), "empty") {
		t.Fatalf("a trivial run fails under the limit: %s", out)
	}
	cmd := exec.Command(prlimit, fmt.Sprintf("--as=%d", mergeASLimit), bin, file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("merge of %d records under RLIMIT_AS %d: %v\n%.2000s", n, mergeASLimit, err, stderr.String())
	}
	d, err := document.Read(file, out)
	if err != nil {
		t.Fatalf("merge output: %v", err)
	}
	m, ok := d.(*document.MergedRun)
	if !ok {
		t.Fatalf("merge output: a %T, want a merged run", d)
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

// mergeSweepRSSLimit is the peak resident set a merge of two 300-level
// sweeps (300 requests a level, the second sweep an hour after the
// first) may reach: docs/merge.md's bound. Its output is about 46 MB of
// indented JSON (23 MB compact), most of it the levels' timelines, each
// covering the hour between the two runs in up to stats.TimelineCap
// windows.
const mergeSweepRSSLimit = 200 << 20

// mergeSyntheticSweep writes a sweep of levels levels (concurrency 1 to levels),
// reqs requests each, its first level started at start and each next one
// 125 ms later, built from made-up results through the recorder (so the
// records carry timelines and histograms as a run's do), without a run.
func mergeSyntheticSweep(path string, levels, reqs int, start time.Time) error {
	rng := rand.New(rand.NewPCG(uint64(start.Unix()), 7))
	target := stats.TargetInfo{URL: "http://127.0.0.1:8080/", Protocol: "http", Network: "tcp", Address: "127.0.0.1:8080"}
	se := document.SweepSeries{Label: target.URL, Target: target}
	sw := document.Sweep{RequestsPerLevel: int64(reqs)}
	for c := 1; c <= levels; c++ {
		rec := recorder.New(recorder.Options{Shards: min(c, 4)})
		rec.Begin(1e9)
		at := int64(1e9)
		for i := range reqs {
			total := int64(rng.ExpFloat64()*float64(c)*50e3) + 50e3
			r := load.Result{Start: at, Connected: at + total/10, Written: at + total/5, FirstByte: at + total/2,
				Done: at + total, Dialed: true, Status: 200, BytesRead: 110, BodyBytes: 0, BytesWritten: 40}
			rec.Shard(i % min(c, 4)).Record(&r)
			at += total / int64(c)
		}
		// Saved and read back, as a sweep file's records are: histograms
		// sparse, so that 300 levels of them stay small here.
		raw, err := json.Marshal(rec.Merge())
		if err != nil {
			return err
		}
		m := new(stats.Record)
		if err := json.Unmarshal(raw, m); err != nil {
			return err
		}
		began := start.Add(time.Duration(c-1) * 125 * time.Millisecond).Truncate(time.Microsecond)
		elapsed := time.Duration(at - 1e9).Truncate(time.Microsecond)
		m.Plan = stats.Plan{Shape: stats.Shape{Concurrency: c, Requests: int64(reqs)}, Target: target, Hostname: "127.0.0.1", Port: "8080", Path: "/", Timeout: 30 * time.Second, HTTPVersion: "1.1", ConnectionHeader: "close", Method: "GET"}
		m.StartedAt, m.EndedAt, m.Elapsed = stats.Wall{Time: began}, stats.Wall{Time: began.Add(elapsed)}, elapsed
		m.Environment = stats.Environment{Hostname: "gen", Version: "test", Command: []string{"backbench", "sweep"}}
		if m.Timeline != nil {
			m.Timeline.Start = stats.Wall{Time: began}
		}
		sw.Levels = append(sw.Levels, c)
		se.Levels = append(se.Levels, stats.SummaryOf(m))
		se.Records = append(se.Records, m)
	}
	sw.Series = []document.SweepSeries{se}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := document.Write(f, &sw); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestMergeSweepsRSS merges two synthetic 300-level sweeps an hour apart
// in a child process (testdata/mergecmd) and reads its peak resident set
// (the child's own rusage, ru_maxrss): within mergeSweepRSSLimit, as
// docs/merge.md says. It was 546 MB when every window of a merged timeline held its
// latency histogram whole and the output was held compact and indented.
func TestMergeSweepsRSS(t *testing.T) {
	mergeOnceAcrossEngines(t)
	bin := mergeCmdBinary(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	// The two sweeps are made at once (each takes a while under -race).
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = mergeSyntheticSweep(a, 300, 300, t0) }()
	go func() { defer wg.Done(); errs[1] = mergeSyntheticSweep(b, 300, 300, t0.Add(time.Hour)) }()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	out, err := os.Create(filepath.Join(dir, "merged.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	peak := mergePeakRSS(t, out, bin, a, b)
	fi, _ := out.Stat()
	t.Logf("merge of two 300-level sweeps: %d MB written, peak RSS %d MB", fi.Size()>>20, peak>>20)
	if peak > mergeSweepRSSLimit {
		t.Errorf("merge's peak RSS %d MB, above the %d MB bound", peak>>20, mergeSweepRSSLimit>>20)
	}
	// The merge is whole: every level, each with both runs' requests and
	// a timeline over both. Under the race detector, decoding the 44 MB
	// takes minutes: only the counts are looked for, in the bytes.
	data, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	if mergeRaceDetector {
		if n := bytes.Count(data, []byte(`"complete": 600,`)); n < 300 {
			t.Fatalf("merged: %d records or levels of 600 requests, want 300 at least", n)
		}
		return
	}
	// (Only what is checked is decoded: the windows' histograms stay raw.)
	var m struct {
		Series []struct {
			Records []struct {
				Plan struct {
					Concurrency int `json:"concurrency"`
				} `json:"plan"`
				Counts struct {
					Complete int64 `json:"complete"`
				} `json:"counts"`
				Timeline *struct {
					Width   time.Duration     `json:"width_ns"`
					Windows []json.RawMessage `json:"windows"`
				} `json:"timeline"`
			} `json:"records"`
		} `json:"series"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Series) != 1 || len(m.Series[0].Records) != 300 {
		t.Fatalf("merged: %d series, want 1 of 300 levels", len(m.Series))
	}
	for _, r := range m.Series[0].Records {
		tl := r.Timeline
		if r.Counts.Complete != 600 || tl == nil || tl.Width*time.Duration(len(tl.Windows)) < time.Hour {
			t.Fatalf("level %d: %d complete, timeline %v: want 600 over an hour", r.Plan.Concurrency, r.Counts.Complete, tl != nil)
		}
	}
}

// mergeRusageHelperEnv asks the test binary, run again, to be
// TestMergeRusageHelper: the JSON array of the command to run.
const mergeRusageHelperEnv = "BACKBENCH_TEST_MERGE_RUSAGE_OF"

// mergePeakRSS runs the command argv with its stdout to out and returns
// its peak resident set in bytes (ru_maxrss). The command is started by
// this test binary run again (TestMergeRusageHelper), not by this process: Go
// starts a child with vfork, and the kernel counts the parent's own peak
// into the child's ru_maxrss at exec, which here would be every test's
// memory so far. The helper is small (a few MB), far below the bounds
// tested.
func mergePeakRSS(t *testing.T, out *os.File, argv ...string) int64 {
	t.Helper()
	spec, _ := json.Marshal(argv)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMergeRusageHelper$", "-test.count=1")
	// The runtime's defaults, whatever this test runs under: GOGC,
	// GOMEMLIMIT or GODEBUG would move the peak measured.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, mergeRusageHelperEnv+"="+string(spec))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = &stdout, &stderr, []*os.File{out}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s%s", argv, err, stdout.String(), stderr.String())
	}
	m := regexp.MustCompile(`maxrss=([0-9]+)`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("the helper said no maxrss: %s", stdout.String())
	}
	var kb int64
	fmt.Sscan(m[1], &kb)
	return kb << 10 // ru_maxrss is in KiB on Linux
}

// TestMergeRusageHelper is mergePeakRSS's helper, run only by it: it runs the
// command of mergeRusageHelperEnv with its stdout to file descriptor 3 and
// prints the command's ru_maxrss, in KiB.
func TestMergeRusageHelper(t *testing.T) {
	spec := os.Getenv(mergeRusageHelperEnv)
	if spec == "" {
		t.Skip("mergePeakRSS's helper")
	}
	var argv []string
	if err := json.Unmarshal([]byte(spec), &argv); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = os.NewFile(3, "out"), &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, stderr.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage of the child")
	}
	fmt.Printf("maxrss=%d\n", ru.Maxrss)
}
