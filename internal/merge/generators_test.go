package merge_test

// Merges of runs made against in-process backends (fixtures), as
// generators make them: the runs are made with the executor and the sweep
// runner (execute.Run, sweep.Run), packages above merge used here only to
// build its input, and the merged results are rendered with report's
// merge renderers to check the words the reports say.

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/merge"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/sockets"
)

// genPlan is bench's plan against url: GET, no keep-alive, 30 s timeout,
// changed by change.
func genPlan(t *testing.T, url string, change func(*execute.Plan)) *execute.Plan {
	t.Helper()
	tgt, err := sockets.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	p := &execute.Plan{Target: tgt, Method: "GET", Timeout: 30 * time.Second}
	p.Concurrency = 1
	if change != nil {
		change(p)
	}
	return p
}

// genRun runs p as bench does with the options o (quiet), and returns
// its JSON as bench --format json writes it.
func genRun(t *testing.T, p *execute.Plan, o execute.Options) ([]byte, error) {
	o.Quiet, o.Observe = true, true
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	run, err := execute.Run(context.Background(), p, o)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := document.Write(&b, &document.Run{Summary: &run.Summary, Record: run.Record}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// genFile runs p (genRun) and writes its JSON to dir/name.
func genFile(t *testing.T, dir, name string, p *execute.Plan) string {
	t.Helper()
	b, err := genRun(t, p, execute.Options{})
	if err != nil {
		t.Fatalf("run of %s: %v", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// genMerge merges the files (merge.Merge, ReadFile), as merge FILE...
// does.
func genMerge(o merge.Options, files ...string) (document.Result, error) {
	m := merge.New(o)
	for _, f := range files {
		if err := m.ReadFile(f, nil); err != nil {
			return nil, err
		}
	}
	return m.Result()
}

// genMergedRun merges bench files and fails the test unless they merge.
func genMergedRun(t *testing.T, o merge.Options, files ...string) *document.MergedRun {
	t.Helper()
	d, err := genMerge(o, files...)
	if err != nil {
		t.Fatalf("merge %q: %v", files, err)
	}
	run, ok := d.(*document.MergedRun)
	if !ok {
		t.Fatalf("merge %q: a %T, want a merged run", files, d)
	}
	return run
}

// genMergeText is merge's text report of a merged run.
func genMergeText(t *testing.T, run *document.MergedRun) string {
	t.Helper()
	var b strings.Builder
	if err := report.MergeText(&b, run.Summary, run.Generators, run.Info, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// genRawTotals returns the total_ms of every complete request of a raw
// CSV and the earliest start (Unix seconds).
func genRawTotals(t *testing.T, raw []byte) ([]float64, float64) {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("raw CSV: %v (%d lines)", err, len(rows))
	}
	var totals []float64
	first := math.Inf(1)
	for _, r := range rows[1:] {
		start, err1 := strconv.ParseFloat(r[1], 64)
		ms, err2 := strconv.ParseFloat(r[4], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("raw row %q", r)
		}
		first = min(first, start)
		if r[7] == "ok" || r[7] == "length" {
			totals = append(totals, ms)
		}
	}
	return totals, first
}

// TestMergeThreeGeneratorsTogether runs three generators with the same
// start time (execute.Options.StartAt) at once against one built-in
// backend, and checks that all start within 100 ms of it and that the
// merge is the one of every request together: complete is the sum, p50
// and p99 are the percentiles of all the raw rows within HDR precision,
// and req/s is the total over the window. The three runs one after the
// other in one file merge the same, named FILE#K; the merged percentiles
// as ab's CSV have 101 rows; the text report is ab's, then one line per
// generator. (Generators as separate processes, started by GNU parallel,
// are cmd/backbench's TestParallelRecipe.)
func TestMergeThreeGeneratorsTogether(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelPrefork, N: 6}, Delay: 200 * time.Microsecond})
	const gens = 3
	dir := t.TempDir()
	at := time.Now().Add(3 * time.Second).Truncate(time.Millisecond)
	files := make([]string, gens)
	raws := make([]bytes.Buffer, gens)
	errs := make([]error, gens)
	var wg sync.WaitGroup
	for i := range gens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A time limit, as a scale-out run has: the runs end together too.
			p := genPlan(t, srv.URL("/"), func(p *execute.Plan) { p.Duration, p.Concurrency = time.Second, 3 })
			b, err := genRun(t, p, execute.Options{StartAt: at, Raw: &raws[i]})
			if err == nil {
				files[i] = filepath.Join(dir, fmt.Sprintf("gen%d.json", i))
				err = os.WriteFile(files[i], b, 0o644)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("generator %d: %v", i, err)
		}
	}
	var all []float64
	var earliest, latest time.Time
	for i := range gens {
		b, err := os.ReadFile(files[i])
		if err != nil {
			t.Fatal(err)
		}
		d, err := document.Read(files[i], b)
		if err != nil {
			t.Fatalf("generator %d: %v", i, err)
		}
		rec := d.(*document.Run).Record
		st, en := rec.StartedAt.Time, rec.EndedAt.Time
		if d := st.Sub(at); d < 0 || d > 100*time.Millisecond {
			t.Errorf("generator %d started %v after the start time, want 0 to 100 ms", i, d)
		}
		totals, firstRaw := genRawTotals(t, raws[i].Bytes())
		if d := firstRaw - float64(at.UnixMicro())/1e6; d < -0.001 || d > 0.1 {
			t.Errorf("generator %d: first request %.4f s after the start time", i, d)
		}
		t.Logf("generator %d: started %v after the start time, %d requests", i, st.Sub(at), len(totals))
		all = append(all, totals...)
		if earliest.IsZero() || st.Before(earliest) {
			earliest = st
		}
		if en.After(latest) {
			latest = en
		}
	}

	m := genMergedRun(t, merge.Options{}, files...)
	if m.Complete < 100 || int64(len(all)) != m.Complete {
		t.Errorf("merged complete %d, want every complete raw row: %d", m.Complete, len(all))
	}
	var sum int64
	for _, g := range m.Generators {
		sum += g.Complete
	}
	if sum != m.Complete || len(m.Generators) != gens {
		t.Errorf("generators %+v: complete adds up to %d, merged %d", m.Generators, sum, m.Complete)
	}
	slices.Sort(all)
	for _, q := range []float64{50, 99} {
		// HDR's rank: the nearest rank, at least 1.
		rank := max(int(q/100*float64(len(all))+0.5), 1)
		exact := all[rank-1]
		got := m.Percentiles[strconv.Itoa(int(q))]
		// 3 significant digits (a bucket is at most 1/1024 of its values
		// wide), histograms in whole µs, raw rows rounded to µs.
		if tol := exact/1000 + 0.002; math.Abs(got-exact) > tol {
			t.Errorf("p%g: merged %.3f ms, every raw row gives %.3f ms (tolerance %.4f)", q, got, exact, tol)
		}
		t.Logf("p%g: merged %.3f ms, raw rows %.3f ms", q, got, exact)
	}
	window := latest.Sub(earliest).Seconds()
	if want := float64(m.Complete) / window; math.Abs(m.RequestsPerSecond-want) > want*1e-9 {
		t.Errorf("merged req/s %.3f, want total/window = %d/%.6f = %.3f", m.RequestsPerSecond, m.Complete, window, want)
	}
	if math.Abs(m.Info.WindowSeconds-window) > 1e-9 || m.Info.Forced || len(m.Info.Warnings) != 0 {
		t.Errorf("merge info %+v, want window %.6f s, not forced, no warning", m.Info, window)
	}

	// The three outputs one after the other in one file (GNU parallel's
	// --nonall output) merge the same, named FILE#K.
	var cat []byte
	for _, f := range files {
		b, _ := os.ReadFile(f)
		cat = append(cat, b...)
	}
	one := filepath.Join(dir, "all.json")
	os.WriteFile(one, cat, 0o644)
	d2, err := genMerge(merge.Options{}, one)
	if m2, ok := d2.(*document.MergedRun); err != nil || !ok || m2.Complete != m.Complete ||
		m2.Percentiles["99"] != m.Percentiles["99"] || len(m2.Generators) != gens || m2.Generators[2].File != one+"#3" {
		t.Errorf("merge of one file holding the three: %v, %T", err, d2)
	}

	// The merged percentiles as ab's CSV (merge -e): a header and 0..100.
	var pct bytes.Buffer
	if err := report.PercentileCSV(&pct, stats.PercentileSpectrum(m.Record)); err != nil || strings.Count(pct.String(), "\n") != 102 ||
		!strings.Contains(pct.String(), fmt.Sprintf("\n50,%.3f\n", m.Percentiles["50"])) {
		t.Errorf("percentile CSV: %v\n%s", err, pct.String())
	}
	// The text report: ab's, then one line per generator.
	if text := genMergeText(t, m); !strings.Contains(text, fmt.Sprintf("Complete requests:      %d\n", m.Complete)) ||
		!strings.Contains(text, "Merged:                 3 generators") || strings.Count(text, ".json ") != gens {
		t.Errorf("merge text:\n%s", text)
	}
}

// TestMergeRefusesOtherPlans checks that runs of different plans do not
// merge (an error of one line naming the difference and --force) unless
// Force, which the report says; that runs one after the other get the
// overlap warning; that merged runs merge again; and that the same file
// twice, hostile histograms and files that are no run are refused, each
// with an error of one line.
func TestMergeRefusesOtherPlans(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	other := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	plan := func(url string, n int64, c int, ka bool) *execute.Plan {
		return genPlan(t, url, func(p *execute.Plan) { p.Requests, p.Concurrency, p.KeepAlive = n, c, ka })
	}
	a := genFile(t, dir, "a.json", plan(srv.URL("/"), 200, 2, false))
	b := genFile(t, dir, "b.json", plan(srv.URL("/"), 300, 2, false))
	c4 := genFile(t, dir, "c4.json", plan(srv.URL("/"), 200, 4, false))
	ka := genFile(t, dir, "ka.json", plan(srv.URL("/"), 200, 2, true))
	elsewhere := genFile(t, dir, "other.json", plan(other.URL("/"), 200, 2, false))
	for _, tc := range []struct {
		file, want string
	}{
		{c4, "concurrency 2 vs 4"},
		{ka, "keep_alive false vs true"},
		{elsewhere, other.URL("/")},
	} {
		_, err := genMerge(merge.Options{}, a, tc.file)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--force") {
			t.Errorf("merge a.json %s: %v, want one line with %q", filepath.Base(tc.file), err, tc.want)
		}
	}

	// Force merges them and says so.
	m := genMergedRun(t, merge.Options{Force: true}, a, c4)
	if out := genMergeText(t, m); !strings.Contains(out, "Merge forced:") || !strings.Contains(out, "concurrency 2 vs 4") ||
		!strings.Contains(out, "Complete requests:      400\n") || !strings.Contains(out, "Concurrency Level:      6\n") {
		t.Errorf("forced merge:\n%s", out)
	}
	if m := genMergedRun(t, merge.Options{Force: true}, a, elsewhere); !m.Info.Forced || len(m.Info.PlanDifferences) == 0 || m.Complete != 400 {
		t.Errorf("forced merge of two targets: %+v, complete %d", m.Info, m.Complete)
	}

	// A different -n merges; runs one after the other overlap little.
	m = genMergedRun(t, merge.Options{}, a, b)
	if out := genMergeText(t, m); !strings.Contains(out, "Complete requests:      500\n") || !strings.Contains(out, "Merge warning:") ||
		len(m.Info.Warnings) == 0 || !strings.Contains(m.Info.Warnings[0], "overlap for only") {
		t.Errorf("merge of runs one after the other: warnings %q\n%s", m.Info.Warnings, out)
	}

	// Merged JSON merges again (with merges of as many generators: the
	// concurrency is the sum); the same file twice is refused.
	a2 := genFile(t, dir, "a2.json", plan(srv.URL("/"), 100, 2, false))
	var merged []string
	for _, pair := range [][]string{{a, b}, {a2, a}} {
		var buf bytes.Buffer
		if err := document.Write(&buf, genMergedRun(t, merge.Options{}, pair...)); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("m%d.json", len(merged)))
		os.WriteFile(p, buf.Bytes(), 0o644)
		merged = append(merged, p)
	}
	if out := genMergeText(t, genMergedRun(t, merge.Options{}, merged...)); !strings.Contains(out, "Complete requests:      800\n") {
		t.Errorf("merge of merges:\n%s", out)
	}
	if _, err := genMerge(merge.Options{}, a, b, dir+"/./a.json"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("merge of a file twice: %v", err)
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"complete_requests": 3}`), 0o644)
	notJSON := filepath.Join(dir, "notjson.json")
	os.WriteFile(notJSON, []byte("Server Software: x\n"), 0o644)
	// A hostile file: histograms whose header asks for a range backbench
	// never writes (hdr would allocate the counts it asks for).
	wide, err := hdr.New(1, 1<<62, 3).Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(a)
	hostile := filepath.Join(dir, "hostile.json")
	os.WriteFile(hostile, regexp.MustCompile(`"histogram_us": *"[^"]*"`).ReplaceAll(orig, []byte(`"histogram_us":"`+string(wide)+`"`)), 0o644)
	if _, err := genMerge(merge.Options{}, a, hostile); err == nil || !strings.Contains(err.Error(), "histogram bounds") {
		t.Errorf("merge of a hostile histogram: %v", err)
	}
	for _, files := range [][]string{{}, {bad}, {notJSON}, {hostile}, {filepath.Join(dir, "missing.json")}} {
		_, err := genMerge(merge.Options{}, files...)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("merge %q: %v; want an error of one line", files, err)
		}
	}
}

// TestMergeTwoSweeps merges two sweeps level by level: each level's
// counts add up and its concurrency is the sum over the generators; a
// bench run does not merge with a sweep.
func TestMergeTwoSweeps(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{})
	dir := t.TempDir()
	var files []string
	for i := range 2 {
		series := []sweep.Series{{Label: "A", Plan: genPlan(t, srv.URL("/"), nil)}}
		cfg := sweep.Config{Levels: []int{1, 3}, Requests: 300, Duration: time.Second, Warmup: driver.DefaultWarmup(300, time.Second),
			Options: execute.Options{Stderr: io.Discard, Quiet: true}}
		res, err := sweep.Run(context.Background(), cfg, series)
		if err != nil {
			t.Fatal(err)
		}
		sw := cfg.Document(series, []string{""}, res)
		var buf bytes.Buffer
		if err := document.Write(&buf, &sw); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("sweep%d.json", i))
		os.WriteFile(p, buf.Bytes(), 0o644)
		files = append(files, p)
	}
	d, err := genMerge(merge.Options{}, files...)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := d.(*document.MergedSweep)
	if !ok {
		t.Fatalf("a %T, want a merged sweep", d)
	}
	if !slices.Equal(m.Levels, []int{2, 6}) || len(m.Series) != 1 || len(m.Series[0].Levels) != 2 || len(m.Generators) != 2 {
		t.Fatalf("merged sweep: levels %v, %d series, %d generators", m.Levels, len(m.Series), len(m.Generators))
	}
	for k, s := range m.Series[0].Levels {
		var want int64
		for _, g := range m.Generators {
			want += g.Levels[k].Complete
		}
		if s.Complete != want || s.Complete != 600 {
			t.Errorf("level %d: merged complete %d, generators %d, want 600", s.Concurrency, s.Complete, want)
		}
	}
	var text strings.Builder
	if err := report.MergeSweepText(&text, m.Sweep, m.Generators, m.Info, 100); err != nil ||
		!strings.Contains(text.String(), "Merged sweep: 2 generators, 1 series, 2 levels") {
		t.Errorf("merge text: %v\n%s", err, text.String())
	}
	// A bench run does not merge with a sweep.
	b := genFile(t, dir, "b.json", genPlan(t, srv.URL("/"), func(p *execute.Plan) { p.Requests = 10 }))
	if _, err := genMerge(merge.Options{}, files[0], b); err == nil || !strings.Contains(err.Error(), "sweep") {
		t.Errorf("merge of a sweep and a bench run: %v", err)
	}
}

// TestMergeOpenModelRates merges two open-model runs made together: the
// rates asked add up, as the concurrencies do.
func TestMergeOpenModelRates(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	at := time.Now().Add(500 * time.Millisecond)
	files := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := genPlan(t, srv.URL("/"), func(p *execute.Plan) { p.Rate, p.Requests, p.Concurrency = 200, 100, 4 })
			b, err := genRun(t, p, execute.Options{StartAt: at})
			if err == nil {
				files[i] = filepath.Join(dir, fmt.Sprintf("r%d.json", i))
				err = os.WriteFile(files[i], b, 0o644)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	m := genMergedRun(t, merge.Options{}, files...)
	if m.Open == nil || m.Open.RateAsked != 400 || m.Complete != 200 || m.Concurrency != 8 {
		t.Errorf("merged open model %+v, complete %d, concurrency %d; want 400/s asked, 200, 8", m.Open, m.Complete, m.Concurrency)
	}
}

// TestMergeOneRun: a single file is its own window, all covered.
func TestMergeOneRun(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	a := genFile(t, t.TempDir(), "a.json", genPlan(t, srv.URL("/"), func(p *execute.Plan) { p.Requests = 50 }))
	if m := genMergedRun(t, merge.Options{}, a); m.Info.Overlap != 1 || m.Complete != 50 || m.Info.WindowSeconds != m.TimeTaken {
		t.Errorf("merge of one file: complete %d, %+v", m.Complete, m.Info)
	}
}
