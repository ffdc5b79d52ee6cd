package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/summary"
)

// FuzzMergeInput feeds merge's reader arbitrary files: it must refuse them
// with an error or merge them (with --force, as two generators) and render
// the report, never panic; a run read back merges alone to its own counts.
func FuzzMergeInput(f *testing.F) {
	srv := fixtures.StartTB(f, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	var out bytes.Buffer
	if code := Main(context.Background(), nil, []string{"bench", "-q", "--format", "json", "-n", "20", "-c", "2", srv.URL("/")}, &out, io.Discard); code != 0 {
		f.Fatalf("bench: exit %d", code)
	}
	f.Add(out.Bytes())
	f.Add(append(out.Bytes(), out.Bytes()...))
	f.Add([]byte(`{"schema": 1, "started_at": 1, "ended_at": 2}`))
	f.Add([]byte(`{"series": [{"label": "a", "levels": [], "records": []}]}`))
	f.Add([]byte(`{"record": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ins, err := parseMergeInputs("f.json", data)
		if err != nil {
			return
		}
		o := &mergeOptions{force: true}
		info := &report.MergeInfo{}
		if ins[0].sweep != nil {
			ins2 := append(ins, ins...)
			_ = mergeSweeps(ins2, o, io.Discard, io.Discard)
			return
		}
		for _, in := range ins {
			if in.rec == nil {
				return // a sweep among runs: the command refuses it
			}
			m, err := mergeRecords([]*stats.Record{in.rec, in.rec}, []string{"a", "b"}, o, info, "")
			if err != nil {
				continue
			}
			s := summary.Of(m)
			_ = report.MergeText(io.Discard, &s, nil, info, report.TextOptions{})
			if m.Counts.Complete != 2*in.rec.Counts.Complete {
				t.Fatalf("merged complete %d, want twice %d", m.Counts.Complete, in.rec.Counts.Complete)
			}
		}
	})
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
