package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/serve"
	"github.com/backbench/backbench/internal/trials"
)

// poolMarkEnv is the variable a sizing test puts in a backend's
// environment (the study file's env:), its value naming the run and the
// pool size, so that the test finds the pool's processes itself.
const poolMarkEnv = "BBSIZING_POOL"

// rollupKB reads the Pss and Rss lines of a /proc/PID/smaps_rollup text,
// in kB; ok is false when either is missing. The test's own parser, so
// that what it reads does not share a bug with internal/procstat.
func rollupKB(text string) (pss, rss int64, ok bool) {
	var havePss, haveRss bool
	for _, line := range strings.Split(text, "\n") {
		name, rest, found := strings.Cut(line, ":")
		f := strings.Fields(rest)
		if !found || len(f) != 2 || f[1] != "kB" {
			continue
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "Pss":
			pss, havePss = v, true
		case "Rss":
			rss, haveRss = v, true
		}
	}
	return pss, rss, havePss && haveRss
}

// TestRollupKB checks the test's own smaps_rollup parser on a kernel's
// text.
func TestRollupKB(t *testing.T) {
	const text = `55d0c4a00000-7ffd5b7f2000 ---p 00000000 00:00 0                          [rollup]
Rss:               46800 kB
Pss:               16759 kB
Pss_Dirty:          2100 kB
Pss_Anon:           2076 kB
Shared_Clean:      44532 kB
Private_Dirty:      2076 kB
`
	if pss, rss, ok := rollupKB(text); !ok || pss != 16759 || rss != 46800 {
		t.Errorf("rollupKB: %d, %d, %v; want 16759, 46800, true", pss, rss, ok)
	}
	if _, _, ok := rollupKB("Rss: 10 kB\n"); ok {
		t.Error("rollupKB took a text without Pss")
	}
}

// poolReading is one moment's reading of a pool: every worker's PSS and
// RSS and the whole tree's PSS (the master's with the workers'), in bytes.
type poolReading struct {
	workerPSS, workerRSS []float64
	poolPSS              float64
}

// poolReader reads, every interval, /proc/PID/smaps_rollup of every
// process whose environment holds poolMarkEnv=mark-LEVEL: the master (the
// one without serve's child marker) and its workers (those with it).
type poolReader struct {
	mark string
	done chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	// by holds the complete readings (the master and every worker read)
	// per pool size; seen when each pool was first read whole.
	by   map[string][]poolReading
	seen map[string]time.Time
}

// poolSettle is how long after a pool is first read whole its readings
// begin: while it starts, a child that has not yet mapped the preload
// leaves a larger share of it to the others, and no load runs.
const poolSettle = 2 * time.Second

// readPools starts reading the pools marked mark-LEVEL.
func readPools(mark string, interval time.Duration) *poolReader {
	r := &poolReader{mark: mark, done: make(chan struct{}), by: map[string][]poolReading{}, seen: map[string]time.Time{}}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			r.read()
			select {
			case <-r.done:
				return
			case <-tick.C:
			}
		}
	}()
	return r
}

// read takes one reading of every marked pool.
func (r *poolReader) read() {
	type proc struct {
		child    bool
		pss, rss int64
	}
	pools := map[string][]proc{}
	ents, _ := os.ReadDir("/proc")
	prefix := []byte(poolMarkEnv + "=" + r.mark + "-")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		var level string
		child := false
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, prefix); ok {
				level = string(v)
			}
			child = child || bytes.HasPrefix(kv, []byte(serve.ChildEnv+"="))
		}
		if level == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "smaps_rollup"))
		if err != nil {
			continue
		}
		if pss, rss, ok := rollupKB(string(b)); ok {
			pools[level] = append(pools[level], proc{child, pss << 10, rss << 10})
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for level, ps := range pools {
		n, _ := strconv.Atoi(level)
		var rd poolReading
		masters := 0
		for _, p := range ps {
			rd.poolPSS += float64(p.pss)
			if p.child {
				rd.workerPSS, rd.workerRSS = append(rd.workerPSS, float64(p.pss)), append(rd.workerRSS, float64(p.rss))
			} else {
				masters++
			}
		}
		// Only a whole pool: its master and every worker, all running.
		if masters != 1 || len(rd.workerPSS) != n {
			continue
		}
		if _, ok := r.seen[level]; !ok {
			r.seen[level] = time.Now()
		}
		if time.Since(r.seen[level]) >= poolSettle {
			r.by[level] = append(r.by[level], rd)
		}
	}
}

// stop ends the reading and returns the readings per pool size.
func (r *poolReader) stop() map[string][]poolReading {
	close(r.done)
	r.wg.Wait()
	return r.by
}

// quantile is the nearest-rank q quantile of xs (0 for none).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[max(0, int(math.Ceil(q*float64(len(s))))-1)]
}

// sizingPair is the short sizing study of a built-in prefork pool of 2
// and 4 children sleeping delay a request, each child and the master
// mapping 32 MiB of shared data (--preload: a worker's RSS counts all of
// it, its PSS a share), the backend's environment marked with mark.
// GOGC=10 keeps a worker's heap from growing through the run (with Go's
// default a young worker's PSS grew by a fifth over a search), so that
// the test's readings at other moments than the answer's are of the same
// memory.
func sizingPair(t *testing.T, delay, slo, mark string) string {
	return writeStudy(t, fmt.Sprintf(`question: How many children?
factors:
  workers: {levels: [2, 4], setting: --processes}
backends:
  - name: pool
    command: [backbench, serve, --protocol, http, --processes, "{workers}", --model, serial, --delay, %s, --preload, "33554432", --listen, "{listen}"]
    env: {%s: "%s-{workers}", GOGC: "10"}
    url: "http://{target}/"
measure:
  kind: capacity
  slo: ["%s"]
  duration: 1s
  confirm: 2s
  repeat: 1
`, delay, poolMarkEnv, mark, slo))
}

// TestSizingMemoryAndCompare runs two short sizing studies of the sleep
// model, 25 ms and 50 ms a request, at pools of 2 and 4 children, one
// search each.
//
// Memory: while the first runs, the test reads smaps_rollup of the pool's
// master and workers itself (found by a marker in the backend's
// environment; a worker is a process with serve's child marker) every 50
// ms, and holds the document's per-worker PSS (p50, p95), its pool PSS
// and its worker count to those readings. The tolerance is 15%: the
// document's figures are the answer step's (sampled every 100 ms), the
// test's the whole run's, and a worker's PSS moves by its heap and
// garbage collection (a few hundred KiB of about 17 MiB) and by the
// shared pages' division while processes come and go; the mistakes it
// must catch differ by far more, and the test checks that they do on its
// own readings: a worker's RSS is more than 1.5 times its PSS (the 32 MiB
// preload is counted whole in RSS, a third or a fifth of it in PSS), the
// pool's PSS more than 1.5 times a worker's; the master counted as a
// worker makes one worker too many.
//
// Compare: backbench compare of the two study.json files pairs both pool
// sizes and says the second's capacity (req/s) is slower at each (half
// the first's).
//
// Long (about 2 minutes: 4 searches): make test-long runs it.
func TestSizingMemoryAndCompare(t *testing.T) {
	skipUnlessLong(t)
	studyBinary(t)
	mark := fmt.Sprintf("m%d-%d", os.Getpid(), time.Now().UnixNano())
	r25 := sizingPair(t, "25ms", "p99<=250ms", mark)
	rd := readPools(mark, 50*time.Millisecond)
	a := runStudy(t, r25)
	readings := rd.stop()
	b := runStudy(t, sizingPair(t, "50ms", "p99<=500ms", mark+"x"))
	for _, r := range []studyRun{a, b} {
		if r.code != 0 || r.res == nil || r.res.Sizing == nil || len(r.res.Sizing.Points) != 2 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	}
	within := func(what string, doc, own float64) {
		t.Helper()
		if own <= 0 || math.Abs(doc-own) > 0.15*own {
			t.Errorf("%s: the document says %.2f MiB, the test read %.2f MiB (want within 15%%)", what, doc/(1<<20), own/(1<<20))
		} else {
			t.Logf("%s: the document says %.2f MiB, the test read %.2f MiB", what, doc/(1<<20), own/(1<<20))
		}
	}
	for _, p := range a.res.Sizing.Points {
		n, _ := strconv.Atoi(p.Level)
		rs := readings[p.Level]
		if len(rs) < 10 {
			t.Errorf("workers=%s: %d whole readings of the pool during the run, want 10 or more", p.Level, len(rs))
			continue
		}
		var pss, rss, pools []float64
		for _, r := range rs {
			pss, rss, pools = append(pss, r.workerPSS...), append(rss, r.workerRSS...), append(pools, r.poolPSS)
		}
		// The readings tell the mistakes apart: RSS from PSS, the pool
		// from a worker.
		if quantile(rss, 0.5) < 1.5*quantile(pss, 0.5) || quantile(pools, 0.5) < 1.5*quantile(pss, 0.95) {
			t.Fatalf("workers=%s: the test's readings cannot tell RSS (%.1f MiB) or the pool (%.1f MiB) from a worker's PSS (%.1f MiB)",
				p.Level, quantile(rss, 0.5)/(1<<20), quantile(pools, 0.5)/(1<<20), quantile(pss, 0.5)/(1<<20))
		}
		t.Logf("workers=%s: %d readings; worker RSS p50 %.1f MiB", p.Level, len(rs), quantile(rss, 0.5)/(1<<20))
		within("workers="+p.Level+": per-worker PSS p50", p.WorkerPSS.P50, quantile(pss, 0.5))
		within("workers="+p.Level+": per-worker PSS p95", p.WorkerPSS.P95, quantile(pss, 0.95))
		within("workers="+p.Level+": pool PSS", p.PoolPSSBytes, quantile(pools, 0.5))
		if p.Workers != n {
			t.Errorf("workers=%s: the document counts %d workers, the test found %d with serve's child marker", p.Level, p.Workers, n)
		}
	}

	// compare pairs the pool sizes of the two studies: the second's
	// capacity is lower at each.
	code, out, errs := runMain(t, context.Background(), "compare", "--format", "json", filepath.Join(a.dir, "study.json"), filepath.Join(b.dir, "study.json"))
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s\n%s", code, out, errs)
	}
	var cmp struct {
		Comparisons []trials.Comparison `json:"comparisons"`
		Notes       []string            `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &cmp); err != nil {
		t.Fatalf("compare's JSON: %v\n%s", err, out)
	}
	verdicts := map[string]string{}
	for _, c := range cmp.Comparisons {
		if c.Metric == trials.MetricRequestsPerSecond {
			if c.Series != c.Baseline {
				t.Errorf("compare paired %s with %s", c.Series, c.Baseline)
			}
			verdicts[c.Series] = c.Verdict
		}
	}
	for _, p := range b.res.Sizing.Points {
		if v, ok := verdicts[p.Label]; !ok || v != trials.Slower {
			t.Errorf("%s: compare's capacity verdict %q (paired: %v), want %q: %v\n%s", p.Label, v, ok, trials.Slower, verdicts, out)
		}
	}
	if len(verdicts) != 2 {
		t.Errorf("compare paired %d pool sizes, want 2: %v", len(verdicts), verdicts)
	}
	code, text, _ := runMain(t, context.Background(), "compare", filepath.Join(a.dir, "study.json"), filepath.Join(b.dir, "study.json"))
	for _, l := range []string{"workers=2 vs workers=2", "workers=4 vs workers=4"} {
		if code != 0 || !strings.Contains(text, l) {
			t.Errorf("compare's text lacks %q:\n%s", l, text)
		}
	}
	if strings.Contains(text, "has no trials") {
		t.Errorf("compare's text says a sizing study has no trials, and so no verdict, beside its verdicts:\n%s", text)
	}
	for _, r := range []studyRun{a, b} {
		for _, p := range r.res.Sizing.Points {
			t.Logf("%s workers=%s: %.1f req/s; pool PSS %.1f MiB, per worker p50 %.1f, p95 %.1f MiB, %d workers", filepath.Base(r.dir), p.Level,
				p.Capacity.Median, p.PoolPSSBytes/(1<<20), p.WorkerPSS.P50/(1<<20), p.WorkerPSS.P95/(1<<20), p.Workers)
		}
	}
	t.Logf("compare:\n%s", text)
}
