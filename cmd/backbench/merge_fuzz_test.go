package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/stats"
)

// FuzzMergeInput runs merge, as the command line does (--force, both
// formats), on an arbitrary file: it must refuse it with an error, or
// merge what its reader (eachMergeInput) read of it: a bench run's
// complete and failed requests are the sum of the file's runs, one
// generator per run, the overlap within 0..1 (1 for one run); a sweep's
// merged levels hold no more requests than the files' levels, and all of
// them for one sweep. Never a panic, never a success from a file the
// reader refuses.
func FuzzMergeInput(f *testing.F) {
	srv := fixtures.StartTB(f, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	var runs [2]bytes.Buffer
	for i := range runs {
		if code := Main(context.Background(), nil, []string{"bench", "-q", "--format", "json", "-n", "20", "-c", "2", srv.URL("/")}, &runs[i], io.Discard); code != 0 {
			f.Fatalf("bench: exit %d", code)
		}
	}
	f.Add(runs[0].Bytes())
	f.Add(append(runs[0].Bytes(), runs[1].Bytes()...))
	f.Add(append(runs[0].Bytes(), runs[0].Bytes()...))
	f.Add([]byte(`{"schema": 1, "started_at": 1, "ended_at": 2}`))
	f.Add([]byte(`{"series": [{"label": "a", "levels": [], "records": []}]}`))
	f.Add([]byte(`{"record": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var ins []mergeInput
		readErr := eachMergeInput(path, func(_ int, in mergeInput) error { ins = append(ins, in); return nil })
		var out bytes.Buffer
		err := mergeCmd(context.Background(), []string{"--force", "--format", "json", path}, &out, io.Discard)
		if readErr != nil && err == nil {
			t.Fatalf("merged a file its reader refuses (%v)", readErr)
		}
		if err != nil {
			return
		}
		var text bytes.Buffer
		if err := mergeCmd(context.Background(), []string{"--force", path}, &text, io.Discard); err != nil || text.Len() == 0 {
			t.Fatalf("merged as JSON but not as text: %v", err)
		}
		if ins[0].sweep != nil {
			checkMergedSweep(t, ins, out.Bytes())
			return
		}
		var m mergedRun
		if err := json.Unmarshal(out.Bytes(), &m); err != nil || m.Record == nil {
			t.Fatalf("merge's JSON does not read back: %v\n%s", err, out.Bytes())
		}
		var complete, failed int64
		for _, in := range ins {
			complete += in.rec.Counts.Complete
			failed += in.rec.Counts.Failed()
		}
		if m.Complete != complete || m.Record.Counts.Complete != complete || m.Record.Counts.Failed() != failed {
			t.Errorf("merged %d complete (record %d), %d failed; the runs hold %d and %d",
				m.Complete, m.Record.Counts.Complete, m.Record.Counts.Failed(), complete, failed)
		}
		if len(m.Generators) != len(ins) || m.Merge.Overlap < 0 || m.Merge.Overlap > 1 || len(ins) == 1 && m.Merge.Overlap != 1 {
			t.Errorf("%d runs: %d generators, overlap %v", len(ins), len(m.Generators), m.Merge.Overlap)
		}
	})
}

// checkMergedSweep checks a merged sweep's JSON against the sweeps read:
// per series, its levels hold at most the files' requests, and all of
// them when there was one file.
func checkMergedSweep(t *testing.T, ins []mergeInput, out []byte) {
	t.Helper()
	var ms struct {
		Series []struct {
			Records []*stats.Record `json:"records"`
		} `json:"series"`
	}
	if err := json.Unmarshal(out, &ms); err != nil || len(ms.Series) != len(ins[0].sweep.Series) {
		t.Fatalf("merged sweep's JSON: %v, %d series", err, len(ms.Series))
	}
	for k, se := range ms.Series {
		var got, have int64
		for _, r := range se.Records {
			got += r.Counts.Complete
		}
		for _, in := range ins {
			for _, r := range in.sweep.Series[k].Records {
				have += r.Counts.Complete
			}
		}
		if got > have || len(ins) == 1 && got != have {
			t.Errorf("series %d: %d requests merged of the files' %d", k, got, have)
		}
	}
}
