package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/stats"
)

// schema1 reads a file of testdata/schema1 (written by the backbench
// before this package: see testdata/schema1/README.txt).
func schema1(t *testing.T, name string) (Result, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "schema1", name))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Read(name, b)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return d, b
}

// completeOf adds up the complete requests of records.
func completeOf(recs []*stats.Record) int64 {
	var n int64
	for _, r := range recs {
		n += r.Counts.Complete
	}
	return n
}

// TestReadSchema1: every schema-1 file of each kind is read, as its kind,
// with its records, and the records' figures are the file's own summary's.
func TestReadSchema1(t *testing.T) {
	for _, tc := range []struct {
		file    string
		kind    Kind
		records int
		check   func(t *testing.T, d Result)
	}{
		{"bench.json", KindBench, 1, func(t *testing.T, d Result) {
			b := d.(*Run)
			if s := stats.SummaryOf(b.Meta.Records[0]); s.Complete != 40 || b.Complete != 40 || s.RequestsPerSecond != b.RequestsPerSecond {
				t.Errorf("record: %d complete at %g req/s; file %d at %g", s.Complete, s.RequestsPerSecond, b.Complete, b.RequestsPerSecond)
			}
		}},
		{"bench-repeat.json", KindBench, 3, func(t *testing.T, d Result) {
			b := d.(*Trials)
			if n := completeOf(b.Meta.Records); n != b.Complete || n != 60 {
				t.Errorf("trials: %d complete, file %d", n, b.Complete)
			}
			if len(b.Trials) != 3 || b.Record == nil {
				t.Errorf("%d trials, record %v", len(b.Trials), b.Record != nil)
			}
		}},
		{"sweep.json", KindSweep, 2, func(t *testing.T, d Result) {
			levels := d.(*Sweep).Series[0].Levels
			for i, r := range d.Saved().Records {
				if s := stats.SummaryOf(r); s.Complete != levels[i].Complete || s.Concurrency != levels[i].Concurrency {
					t.Errorf("level %d: record %d complete at c=%d, file %d at c=%d", i, s.Complete, s.Concurrency, levels[i].Complete, levels[i].Concurrency)
				}
			}
		}},
		{"sweep-repeat.json", KindSweep, 4, func(t *testing.T, d Result) {
			sw := d.(*Sweep)
			var want int64
			for _, l := range sw.Series[0].Levels {
				want += l.Complete
			}
			if n := completeOf(sw.Meta.Records); n != want || sw.SweepTrials == nil || sw.Repeat != 2 {
				t.Errorf("trials: %d complete, levels %d; trials %+v", n, want, sw.SweepTrials)
			}
		}},
		{"capacity.json", KindCapacity, 0, func(t *testing.T, d Result) {
			c := d.(*Capacity)
			if c.CapacityRPS == nil || *c.CapacityRPS != 80 || len(c.Steps) != 4 || c.Steps[3].Rate != 80 || c.Meta.Environment == nil {
				t.Errorf("capacity %v, %d steps", c.CapacityRPS, len(c.Steps))
			}
		}},
		{"merge.json", KindMerge, 1, func(t *testing.T, d Result) {
			m := d.(*MergedRun)
			if m.Info == nil || len(m.Generators) != 2 || m.Meta.Records[0].Counts.Complete != m.Complete || m.Complete != 80 {
				t.Errorf("merge: %+v", m.Info)
			}
		}},
		{"merge-sweep.json", KindMerge, 2, func(t *testing.T, d Result) {
			m := d.(*MergedSweep)
			if m.Sweep == nil || m.Info == nil || len(m.Generators) != 2 || m.Meta.Records[1].Counts.Complete != m.Series[0].Levels[1].Complete {
				t.Errorf("merged sweep: %+v", m.Info)
			}
		}},
		{"compare.json", KindCompare, 0, func(t *testing.T, d Result) {
			c := d.(*Comparison)
			if len(c.Comparisons) == 0 || len(c.Files) != 2 || len(c.Meta.Notes) == 0 {
				t.Errorf("compare: %d comparisons, files %v", len(c.Comparisons), c.Files)
			}
		}},
		{"probe.json", KindProbe, 0, func(t *testing.T, d Result) {
			p := d.(*Probe)
			if p.Target.URL != "http://127.0.0.1:39517/" || p.TimeoutSeconds != 5 || len(p.Summary) == 0 || len(p.Checks) == 0 || p.Checks[0].Check == nil {
				t.Errorf("probe: %+v", p)
			}
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r, _ := schema1(t, tc.file)
			d := r.Saved()
			if r.ResultKind() != tc.kind || len(d.Records) != tc.records {
				t.Fatalf("kind %q with %d records, want %q with %d", r.ResultKind(), len(d.Records), tc.kind, tc.records)
			}
			if tc.records > 0 && (d.Schema != 1 || d.Environment == nil || d.StartedAt == 0 || d.EndedAt < d.StartedAt ||
				d.Plan == nil || d.Plan.Target.URL != "http://127.0.0.1:39517/" || len(d.Environment.Command) == 0) {
				t.Errorf("schema %d, environment %v, %g to %g, plan %+v", d.Schema, d.Environment, d.StartedAt, d.EndedAt, d.Plan)
			}
			tc.check(t, r)
		})
	}
}

// TestRoundTrip: a schema-1 file read and written is the same file with
// its kind first (every key kept, every number the same), and a document
// written, read and written again gives the same bytes.
func TestRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "schema1", "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("%d files: %v", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			d, orig := schema1(t, filepath.Base(f))
			var once bytes.Buffer
			if err := Write(&once, d); err != nil {
				t.Fatal(err)
			}
			kindLine := `  "kind": "` + string(d.ResultKind()) + `",` + "\n"
			if got := strings.Replace(once.String(), kindLine, "", 1); got != string(orig) {
				t.Errorf("written again, the file differs beyond its kind:\n%s", firstDiff(got, string(orig)))
			}
			d2, err := Read("again.json", once.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			var twice bytes.Buffer
			if err := Write(&twice, d2); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(once.Bytes(), twice.Bytes()) {
				t.Errorf("write, read, write: not the same bytes:\n%s", firstDiff(once.String(), twice.String()))
			}
			if d2.ResultKind() != d.ResultKind() || len(d2.Saved().Records) != len(d.Saved().Records) || fmt.Sprintf("%T", d2) != fmt.Sprintf("%T", d) {
				t.Errorf("read again: %T %s with %d records, was %T %s with %d", d2, d2.ResultKind(), len(d2.Saved().Records), d, d.ResultKind(), len(d.Saved().Records))
			}
		})
	}
}

// firstDiff shows where two texts part.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(i-80, 0)
	return "…" + a[lo:min(i+80, len(a))] + "\nvs\n…" + b[lo:min(i+80, len(b))]
}

// phasesJSON is a record's counts and histograms as JSON, to compare.
func phasesJSON(t *testing.T, r *stats.Record) string {
	t.Helper()
	b, err := json.Marshal(struct {
		C stats.Counts
		P stats.Phases
	}{r.Counts, r.Phases})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMergesExactly: merging a document's records gives its merged
// record's counts and histograms bucket for bucket: a bench run's trials
// give its record, two bench runs' records the merge's record, and each
// level of two sweeps the merged sweep's level.
func TestMergesExactly(t *testing.T) {
	rep, _ := schema1(t, "bench-repeat.json")
	m, err := stats.Merge(rep.Saved().Records...)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := phasesJSON(t, m), phasesJSON(t, rep.(*Trials).Record); got != want {
		t.Errorf("the trials merged:\n%s\nthe file's record:\n%s", got, want)
	}

	a, _ := schema1(t, "bench.json")
	b, _ := schema1(t, "bench-b.json")
	merged, _ := schema1(t, "merge.json")
	m, err = stats.Merge(append(a.Saved().Records, b.Saved().Records...)...)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := phasesJSON(t, m), phasesJSON(t, merged.Saved().Records[0]); got != want {
		t.Errorf("two bench records merged:\n%s\nmerge.json's record:\n%s", got, want)
	}

	sa, _ := schema1(t, "sweep.json")
	sb, _ := schema1(t, "sweep-b.json")
	ms, _ := schema1(t, "merge-sweep.json")
	for i := range ms.Saved().Records {
		m, err := stats.Merge(sa.Saved().Records[i], sb.Saved().Records[i])
		if err != nil {
			t.Fatal(err)
		}
		if got, want := phasesJSON(t, m), phasesJSON(t, ms.Saved().Records[i]); got != want {
			t.Errorf("level %d merged:\n%s\nmerge-sweep.json's:\n%s", i, got, want)
		}
	}
}

// TestReadRefuses: what is no document, of a newer schema or with bad
// numbers is refused, each error naming the file, on one line.
func TestReadRefuses(t *testing.T) {
	_, benchFile := schema1(t, "bench.json")
	for _, tc := range []struct {
		name, data string
		want       error
	}{
		{"text", "hello\n", ErrNotDocument},
		{"empty", "", ErrNotDocument},
		{"null", "null", ErrNotDocument},
		{"array", "[1]", ErrNotDocument},
		{"other object", `{"name": "x"}`, ErrNotDocument},
		{"unknown kind", `{"kind": "nosuch", "comparisons": []}`, ErrNotDocument},
		{"two objects", `{"comparisons": []} {}`, ErrNotDocument},
		{"bad types", `{"series": 3, "levels": [1]}`, ErrBadContent},
		{"newer schema", `{"schema": 2, "series": [], "levels": []}`, ErrNewerSchema},
		{"newer record", `{"record": {"schema": 9}, "target": {}, "complete_requests": 1}`, ErrNewerSchema},
		{"schema no schema", strings.Replace(string(benchFile), `"schema": 1`, `"schema": 1.5`, 1), ErrBadContent},
		{"negative count", strings.Replace(string(benchFile), `"complete_requests": 40`, `"complete_requests": -1`, 1), ErrBadContent},
		{"negative record count", strings.Replace(string(benchFile), `"complete": 40`, `"complete": -1`, 1), ErrBadContent},
		{"trials without them", `{"target": {}, "requests_per_second": 1, "trials": []}`, ErrBadContent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read("in.json", []byte(tc.data))
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrNotDocument) && tc.want != ErrNewerSchema {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "in.json: ") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming the file", msg)
			}
		})
	}
}
