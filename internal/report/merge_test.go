package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// fixedMerge is a synthetic merge of three generators, one with a long
// file name.
func fixedMerge() ([]Generator, *MergeInfo) {
	gens := []Generator{
		{File: "gen-a.json", Host: "gen-a", Complete: 333, RequestsPerSecond: 650.02, P99Ms: 19.1, ClientCPUPercent: 48.6},
		{File: "gen-b.json", Host: "gen-b", Complete: 333, RequestsPerSecond: 649.5, P99Ms: 20.4, ClientCPUPercent: 51.2},
		{File: "/var/tmp/results/a-rather-long-directory/gen-c.json", Host: "backbench-2-x7k2p", Complete: 332,
			RequestsPerSecond: 648.1, P99Ms: 19.7, ClientCPUPercent: 47},
	}
	info := &MergeInfo{WindowSeconds: 0.5123, Overlap: 0.874, Forced: true,
		PlanDifferences: []string{"gen-b.json: concurrency 3 vs 4"},
		Warnings:        []string{"the runs overlap for only 87.4% of the window"}}
	return gens, info
}

func TestGoldenMergeText(t *testing.T) {
	s := fixed()
	gens, info := fixedMerge()
	var b bytes.Buffer
	if err := MergeText(&b, &s, gens, info, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "merge.golden", b.Bytes())
	var tb bytes.Buffer
	Text(&tb, &s, TextOptions{})
	if !strings.HasPrefix(b.String(), tb.String()) {
		t.Error("the merged report does not start with ab's report of the merged run")
	}
}

func TestGoldenMergeSweepText(t *testing.T) {
	sw := fixedSweep()
	gens, info := fixedMerge()
	for i := range gens {
		gens[i].Levels = []GeneratorLevel{{Label: "a", Concurrency: 1, Complete: 100, RequestsPerSecond: 10, P99Ms: 1}}
	}
	info.Forced, info.PlanDifferences = false, nil
	var b bytes.Buffer
	if err := MergeSweepText(&b, &sw, gens, info, 0); err != nil {
		t.Fatal(err)
	}
	golden(t, "merge_sweep.golden", b.Bytes())
}

// TestMergeJSONKeys checks the keys docs/merge.md promises: the bench
// object's, "generators" with one object per input and "merge".
func TestMergeJSONKeys(t *testing.T) {
	s := fixed()
	gens, info := fixedMerge()
	var b bytes.Buffer
	if err := MergeJSON(&b, &s, nil, gens, info); err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"complete_requests", "requests_per_second", "percentiles_ms", "record", "generators", "merge"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %q", k)
		}
	}
	var g []map[string]any
	json.Unmarshal(got["generators"], &g)
	var keys []string
	for k := range g[0] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"client_cpu_percent", "complete_requests", "file", "host", "p99_ms", "requests_per_second"}; len(g) != 3 || !slices.Equal(keys, want) {
		t.Errorf("generators %v: keys %v, want %v", g, keys, want)
	}
	var m map[string]any
	json.Unmarshal(got["merge"], &m)
	if m["forced"] != true || m["window_seconds"] != 0.5123 || m["overlap"] != 0.874 {
		t.Errorf("merge %v", m)
	}
}
