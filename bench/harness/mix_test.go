package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/backbench/backbench/internal/targets"
)

// TestMixPair: the request mix's pair runs backbench with a targets file
// of 1,000 distinct paths (weights 1 to 3, read by backbench's own
// parser) against the URL alone, and a one-block file as a reference,
// every other argument the same, against the same server, with a client
// CPU target of 1.05x.
func TestMixPair(t *testing.T) {
	dir := t.TempDir()
	p, err := mixPair("/bb", dir, "10", "3", "http://unix:/d/h.sock:/", 42)
	if err != nil {
		t.Fatal(err)
	}
	file := p.a.argv[slices.Index(p.a.argv, "--targets")+1]
	ts, err := targets.ReadFile(file, nil)
	if err != nil || len(ts) != mixTargets {
		t.Fatalf("%s: %d targets, %v", file, len(ts), err)
	}
	for i, tg := range ts {
		if want := fmt.Sprintf("/mix/%04d?k=%04d", i, i); tg.Method != "GET" || tg.URL != want || tg.Weight != 1+i%3 {
			t.Errorf("target %d: %+v, want GET %s weight %d", i, tg, want, 1+i%3)
		}
	}
	drop := func(argv []string) []string {
		if i := slices.Index(argv, "--targets"); i >= 0 {
			return slices.Delete(slices.Clone(argv), i, i+2)
		}
		return argv
	}
	if len(p.refs) != 1 || slices.Contains(p.b.argv, "--targets") || !slices.Equal(drop(p.a.argv), p.b.argv) ||
		!slices.Equal(drop(p.refs[0].argv), p.b.argv) {
		t.Errorf("argv %q, %q, refs %+v: want the same but --targets", p.a.argv, p.b.argv, p.refs)
	}
	if one, err := targets.ReadFile(p.refs[0].argv[slices.Index(p.refs[0].argv, "--targets")+1], nil); err != nil || len(one) != 1 {
		t.Errorf("the one-block file: %d targets, %v", len(one), err)
	}
	if p.maxCPU != 1.05 || p.need != 0 || !slices.Equal(p.server, []int{42}) {
		t.Errorf("target %v CPU, %v req/s, server %v", p.maxCPU, p.need, p.server)
	}
}
