package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

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

// netnsRunner returns how to run a generator process: in a network
// namespace of its own when the test can make one (as root, with ip), else
// plainly. The namespaces are removed when the test ends.
func netnsRunner(t *testing.T, n int) [][]string {
	t.Helper()
	prefixes := make([][]string, n)
	if os.Geteuid() != 0 {
		t.Logf("not root: the generators run on this host's network")
		return prefixes
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Logf("no ip command: the generators run on this host's network")
		return prefixes
	}
	for i := range prefixes {
		name := fmt.Sprintf("bbgen-%d-%d", os.Getpid(), i)
		if out, err := exec.Command(ip, "netns", "add", name).CombinedOutput(); err != nil {
			t.Logf("ip netns add: %v %s: the generators run on this host's network", err, out)
			return make([][]string, n)
		}
		t.Cleanup(func() { exec.Command(ip, "netns", "del", name).Run() })
		prefixes[i] = []string{ip, "netns", "exec", name}
	}
	t.Logf("each generator runs in a network namespace of its own (ip netns); they reach the backend over its Unix socket")
	return prefixes
}

// rawTotals returns the total_ms of every complete request of a --raw file
// and the earliest start (Unix seconds).
func rawTotals(t *testing.T, path string) ([]float64, float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("raw file %s: %v (%d lines)", path, err, len(rows))
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

// TestMergeThreeGenerators runs three generator processes (each in a
// network namespace of its own where the test can make one) with the same
// --start-at against one built-in backend, and checks that all start
// within 100 ms of it and that merge's report is the one of every request
// together: complete is the sum, p50 and p99 are the percentiles of all the
// --raw rows within HDR precision, and req/s is the total over the window.
func TestMergeThreeGenerators(t *testing.T) {
	bin := buildBinary(t)
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelPrefork, N: 6}, Delay: 200 * time.Microsecond})
	// A time limit, as a scale-out run has: the runs end together too.
	const gens = 3
	prefixes := netnsRunner(t, gens)
	dir := t.TempDir()
	at := time.Now().Add(3 * time.Second).Truncate(time.Millisecond)
	// Both forms of TIME: RFC 3339 for the first, Unix seconds for the others.
	times := []string{at.UTC().Format(time.RFC3339Nano), fmt.Sprintf("%d.%03d", at.Unix(), at.Nanosecond()/1e6)}
	var cmds []*exec.Cmd
	var files, raws []string
	for i := range gens {
		out := filepath.Join(dir, fmt.Sprintf("gen%d.json", i))
		raw := filepath.Join(dir, fmt.Sprintf("gen%d.csv", i))
		args := append(slices.Clone(prefixes[i]), bin, "bench", "-q", "--format", "json", "--start-at", times[min(i, 1)],
			"-t", "1", "-c", "3", "--raw", raw, srv.URL("/"))
		cmd := exec.Command(args[0], args[1:]...)
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, files, raws = append(cmds, cmd), append(files, out), append(raws, raw)
	}
	for i, cmd := range cmds {
		if code := exitCode(t, cmd, time.Minute); code != 0 {
			t.Fatalf("generator %d: exit %d", i, code)
		}
	}
	var all []float64
	var earliest, latest time.Time
	for i := range gens {
		var g struct {
			Record stats.Record `json:"record"`
		}
		b, err := os.ReadFile(files[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &g); err != nil {
			t.Fatalf("generator %d: %v\n%s", i, err, b)
		}
		st, en := g.Record.StartedAt.Time, g.Record.EndedAt.Time
		if d := st.Sub(at); d < 0 || d > 100*time.Millisecond {
			t.Errorf("generator %d started %v after --start-at, want 0 to 100 ms", i, d)
		}
		totals, firstRaw := rawTotals(t, raws[i])
		if d := firstRaw - float64(at.UnixMicro())/1e6; d < -0.001 || d > 0.1 {
			t.Errorf("generator %d: first request %.4f s after --start-at", i, d)
		}
		t.Logf("generator %d: started %v after --start-at, %d requests", i, st.Sub(at), len(totals))
		all = append(all, totals...)
		if earliest.IsZero() || st.Before(earliest) {
			earliest = st
		}
		if en.After(latest) {
			latest = en
		}
	}

	code, out, errs := runMain(t, context.Background(), append([]string{"merge", "--format", "json"}, files...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	var m mergedRun
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("merge JSON: %v\n%s", err, out)
	}
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
	if math.Abs(m.Merge.WindowSeconds-window) > 1e-9 || m.Merge.Forced || len(m.Merge.Warnings) != 0 {
		t.Errorf("merge info %+v, want window %.6f s, not forced, no warning", m.Merge, window)
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
	code, out, errs = runMain(t, context.Background(), "merge", "--format", "json", one)
	var m2 mergedRun
	if err := json.Unmarshal([]byte(out), &m2); code != 0 || err != nil || m2.Complete != m.Complete ||
		m2.Percentiles["99"] != m.Percentiles["99"] || len(m2.Generators) != gens || m2.Generators[2].File != one+"#3" {
		t.Errorf("merge of one file holding the three: exit %d, %v, %s", code, err, errs)
	}

	// The text report: ab's, then one line per generator; -e writes the
	// merged percentiles as ab's CSV.
	csvFile := filepath.Join(dir, "pct.csv")
	code, text, errs := runMain(t, context.Background(), append([]string{"merge", "-e", csvFile}, files...)...)
	if b, err := os.ReadFile(csvFile); err != nil || strings.Count(string(b), "\n") != 102 ||
		!strings.Contains(string(b), fmt.Sprintf("\n50,%.3f\n", m.Percentiles["50"])) {
		t.Errorf("merge -e: %v\n%s", err, b)
	}
	if code != 0 || !strings.Contains(text, fmt.Sprintf("Complete requests:      %d\n", m.Complete)) ||
		!strings.Contains(text, "Merged:                 3 generators") || strings.Count(text, ".json ") != gens {
		t.Errorf("merge text: exit %d, %s\n%s", code, errs, text)
	}
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

// TestMergeMismatch checks that runs of different plans do not merge
// (exit 2, one line naming the difference) unless --force, which says so
// in the report; that runs one after the other get the overlap warning;
// and that bad files are refused.
func TestMergeMismatch(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	other := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	a := benchFile(t, dir, "a.json", "-n", "200", "-c", "2", srv.URL("/"))
	b := benchFile(t, dir, "b.json", "-n", "300", "-c", "2", srv.URL("/"))
	c4 := benchFile(t, dir, "c4.json", "-n", "200", "-c", "4", srv.URL("/"))
	ka := benchFile(t, dir, "ka.json", "-n", "200", "-c", "2", "-k", srv.URL("/"))
	elsewhere := benchFile(t, dir, "other.json", "-n", "200", "-c", "2", other.URL("/"))
	for _, tc := range []struct {
		file, want string
	}{
		{c4, "concurrency 2 vs 4"},
		{ka, "keep_alive false vs true"},
		{elsewhere, other.URL("/")},
	} {
		code, out, errs := runMain(t, context.Background(), "merge", a, tc.file)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.want) || !strings.Contains(errs, "--force") {
			t.Errorf("merge a.json %s: exit %d, stderr %q, want 2 and one line with %q", filepath.Base(tc.file), code, errs, tc.want)
		}
	}

	// --force merges them and says so.
	code, out, errs := runMain(t, context.Background(), "merge", "--force", a, c4)
	if code != 0 || !strings.Contains(out, "Merge forced:") || !strings.Contains(out, "concurrency 2 vs 4") ||
		!strings.Contains(out, "Complete requests:      400\n") || !strings.Contains(out, "Concurrency Level:      6\n") {
		t.Errorf("merge --force: exit %d, %s\n%s", code, errs, out)
	}
	code, out, _ = runMain(t, context.Background(), "merge", "--force", "--format", "json", a, elsewhere)
	var m mergedRun
	if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil || !m.Merge.Forced || len(m.Merge.PlanDifferences) == 0 || m.Complete != 400 {
		t.Errorf("merge --force --format json: exit %d, %v, %+v", code, err, m.Merge)
	}

	// A different -n merges; runs one after the other overlap little.
	code, out, errs = runMain(t, context.Background(), "merge", a, b)
	if code != 0 || !strings.Contains(out, "Complete requests:      500\n") || !strings.Contains(errs, "overlap for only") ||
		!strings.Contains(out, "Merge warning:") {
		t.Errorf("merge of runs one after the other: exit %d, stderr %q\n%s", code, errs, out)
	}

	// Merged JSON merges again (with merges of as many generators: the
	// concurrency is the sum); the same file twice is refused.
	a2 := benchFile(t, dir, "a2.json", "-n", "100", "-c", "2", srv.URL("/"))
	var merged []string
	for _, pair := range [][]string{{a, b}, {a2, a}} {
		_, out, _ := runMain(t, context.Background(), "merge", "--format", "json", pair[0], pair[1])
		p := filepath.Join(dir, fmt.Sprintf("m%d.json", len(merged)))
		os.WriteFile(p, []byte(out), 0o644)
		merged = append(merged, p)
	}
	code, out, errs = runMain(t, context.Background(), "merge", merged[0], merged[1])
	if code != 0 || !strings.Contains(out, "Complete requests:      800\n") {
		t.Errorf("merge of merges: exit %d, %s\n%s", code, errs, out)
	}
	if code, _, errs := runMain(t, context.Background(), "merge", a, b, dir+"/./a.json"); code != 2 || !strings.Contains(errs, "twice") {
		t.Errorf("merge of a file twice: exit %d, %s", code, errs)
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
	if code, _, errs := runMain(t, context.Background(), "merge", a, hostile); code != 2 || !strings.Contains(errs, "histogram bounds") {
		t.Errorf("merge of a hostile histogram: exit %d, stderr %q", code, errs)
	}
	for _, args := range [][]string{{}, {bad}, {notJSON}, {hostile}, {filepath.Join(dir, "missing.json")}, {"--format", "xml", a}} {
		code, out, errs := runMain(t, context.Background(), append([]string{"merge"}, args...)...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
			t.Errorf("merge %v: exit %d, stdout %q, stderr %q; want 2 and one line", args, code, out, errs)
		}
	}
}

// TestMergeSweeps merges two sweep.json files level by level: each level's
// counts add up and its concurrency is the sum over the generators.
func TestMergeSweeps(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{})
	var files []string
	at := time.Now().Add(500 * time.Millisecond)
	done := make(chan error, 2)
	for i := range 2 {
		out := filepath.Join(t.TempDir(), fmt.Sprint(i))
		files = append(files, filepath.Join(out, "sweep.json"))
		go func() {
			code, _, errs := runMain(t, context.Background(), "sweep", "-q", "-c", "1,3", "-n", "300", "-t", "1s",
				"--start-at", at.Format(time.RFC3339Nano), "--out", out, "A="+srv.URL("/"))
			if code != 0 {
				done <- fmt.Errorf("sweep: exit %d: %s", code, errs)
			}
			done <- nil
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// --start-at held the first level (its warm-up first) until TIME.
	for _, f := range files {
		var sw report.Sweep
		b, _ := os.ReadFile(f)
		if err := json.Unmarshal(b, &sw); err != nil || len(sw.Series) == 0 || len(sw.Series[0].Records) == 0 {
			t.Fatalf("%s: %v", f, err)
		}
		if st := sw.Series[0].Records[0].StartedAt.Time; st.Before(at) {
			t.Errorf("%s: the first level started at %v, before --start-at %v", f, st, at)
		}
	}
	code, out, errs := runMain(t, context.Background(), append([]string{"merge", "--format", "json"}, files...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	var m struct {
		report.Sweep
		Generators []report.Generator `json:"generators"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
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
	code, text, _ := runMain(t, context.Background(), append([]string{"merge"}, files...)...)
	if code != 0 || !strings.Contains(text, "Merged sweep: 2 generators, 1 series, 2 levels") {
		t.Errorf("merge text: exit %d\n%s", code, text)
	}
	// A bench file does not merge with a sweep.
	b := benchFile(t, t.TempDir(), "b.json", "-n", "10", srv.URL("/"))
	if code, _, errs := runMain(t, context.Background(), "merge", files[0], b); code != 2 || !strings.Contains(errs, "sweep") {
		t.Errorf("merge of a sweep and a bench run: exit %d, %s", code, errs)
	}
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

// TestMergeOpenModel merges two open-model runs made together: the rates
// asked add up, as the concurrencies do.
func TestMergeOpenModel(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	at := time.Now().Add(500 * time.Millisecond).Format(time.RFC3339Nano)
	files := make([]string, 2)
	outs := make(chan string, 2)
	for range files {
		go func() {
			code, out, errs := runMain(t, context.Background(), "bench", "-q", "--format", "json", "--rate", "200", "-n", "100", "-c", "4",
				"--start-at", at, srv.URL("/"))
			if code != 0 {
				out = errs
			}
			outs <- out
		}()
	}
	for i := range files {
		files[i] = filepath.Join(dir, fmt.Sprintf("r%d.json", i))
		os.WriteFile(files[i], []byte(<-outs), 0o644)
	}
	code, out, errs := runMain(t, context.Background(), "merge", "--format", "json", files[0], files[1])
	var m mergedRun
	if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil {
		t.Fatalf("merge: exit %d, %v, %s", code, err, errs)
	}
	if m.Open == nil || m.Open.RateAsked != 400 || m.Complete != 200 || m.Concurrency != 8 {
		t.Errorf("merged open model %+v, complete %d, concurrency %d; want 400/s asked, 200, 8", m.Open, m.Complete, m.Concurrency)
	}
}

// TestMergeOneFile: a single file is its own window, all covered.
func TestMergeOneFile(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	a := benchFile(t, t.TempDir(), "a.json", "-n", "50", srv.URL("/"))
	code, out, errs := runMain(t, context.Background(), "merge", "--format", "json", a)
	var m mergedRun
	if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil || m.Merge.Overlap != 1 || m.Complete != 50 ||
		m.Merge.WindowSeconds != m.TimeTaken {
		t.Errorf("merge of one file: exit %d, %v, %s, %+v", code, err, errs, m.Merge)
	}
}
