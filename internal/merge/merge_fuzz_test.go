package merge

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// schema1 reads a saved result of internal/document's schema-1 files
// (bench and sweep results made by backbench, with their records).
func schema1(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile("../document/testdata/schema1/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// mergeAll merges the runs of data, one input, with --force.
func mergeAll(data []byte) (document.Result, error) {
	m := New(Options{Force: true})
	if err := m.Read("f.json", bytes.NewReader(data)); err != nil {
		return nil, err
	}
	return m.Result()
}

// FuzzMergeInput merges an arbitrary input, as merge --force does: it
// must refuse it with an error, or merge what its reader (Each) read of
// it: a bench run's complete and failed requests are the sum of the
// input's runs, one generator per run, the overlap within 0..1 (1 for
// one run), the result written as JSON and as text; a sweep's merged
// levels hold no more requests than the inputs' levels, and all of them
// for one sweep. Never a panic, never a success from an input the reader
// refuses.
func FuzzMergeInput(f *testing.F) {
	a, b := schema1(f, "bench.json"), schema1(f, "bench-b.json")
	f.Add(a)
	f.Add(append(append([]byte{}, a...), b...))
	f.Add(append(append([]byte{}, a...), a...))
	f.Add(schema1(f, "sweep.json"))
	f.Add([]byte(`{"schema": 1, "started_at": 1, "ended_at": 2}`))
	f.Add([]byte(`{"series": [{"label": "a", "levels": [], "records": []}]}`))
	f.Add([]byte(`{"record": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ins []Input
		readErr := Each("f.json", bytes.NewReader(data), func(_ int, in Input) error { ins = append(ins, in); return nil })
		d, err := mergeAll(data)
		if readErr != nil && err == nil {
			t.Fatalf("merged an input its reader refuses (%v)", readErr)
		}
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := document.Write(&out, d); err != nil {
			t.Fatalf("merge's JSON: %v", err)
		}
		if sw, ok := d.(*document.MergedSweep); ok {
			if err := report.MergeSweepText(io.Discard, sw.Sweep, sw.Generators, sw.Info, 0); err != nil {
				t.Fatalf("merged but not as text: %v", err)
			}
			checkMergedSweep(t, ins, out.Bytes())
			return
		}
		run := d.(*document.MergedRun)
		if err := report.MergeText(io.Discard, run.Summary, run.Generators, run.Info, report.TextOptions{}); err != nil {
			t.Fatalf("merged but not as text: %v", err)
		}
		back, err := document.Read("out.json", out.Bytes())
		if _, ok := back.(*document.MergedRun); err != nil || !ok {
			t.Fatalf("merge's JSON does not read back as a merged run: %T %v\n%s", back, err, out.Bytes())
		}
		var complete, failed int64
		for _, in := range ins {
			complete += in.Record.Counts.Complete
			failed += in.Record.Counts.Failed()
		}
		if run.Complete != complete || run.Record.Counts.Complete != complete || run.Record.Counts.Failed() != failed {
			t.Errorf("merged %d complete (record %d), %d failed; the runs hold %d and %d",
				run.Complete, run.Record.Counts.Complete, run.Record.Counts.Failed(), complete, failed)
		}
		if len(run.Generators) != len(ins) || run.Info.Overlap < 0 || run.Info.Overlap > 1 || len(ins) == 1 && run.Info.Overlap != 1 {
			t.Errorf("%d runs: %d generators, overlap %v", len(ins), len(run.Generators), run.Info.Overlap)
		}
	})
}

// checkMergedSweep checks a merged sweep's JSON against the sweeps read:
// per series, its levels hold at most the inputs' requests, and all of
// them when there was one input.
func checkMergedSweep(t *testing.T, ins []Input, out []byte) {
	t.Helper()
	var ms struct {
		Series []struct {
			Records []*stats.Record `json:"records"`
		} `json:"series"`
	}
	if err := json.Unmarshal(out, &ms); err != nil || len(ms.Series) != len(ins[0].Sweep.Series) {
		t.Fatalf("merged sweep's JSON: %v, %d series", err, len(ms.Series))
	}
	for k, se := range ms.Series {
		var got, have int64
		for _, r := range se.Records {
			got += r.Counts.Complete
		}
		for _, in := range ins {
			for _, r := range in.Sweep.Series[k].Records {
				have += r.Counts.Complete
			}
		}
		if got > have || len(ins) == 1 && got != have {
			t.Errorf("series %d: %d requests merged of the inputs' %d", k, got, have)
		}
	}
}
