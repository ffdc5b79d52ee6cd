package merge

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/document"
)

// TestRunIDWhiteSpace: a run's identity is its content, white space
// aside.
func TestRunIDWhiteSpace(t *testing.T) {
	if RunID([]byte(`{"a": 1, "b": [2, 3]}`)) != RunID([]byte("{\"a\":1,\n  \"b\":[2,3]}")) {
		t.Error("the same JSON laid out differently has two ids")
	}
	if RunID([]byte(`{"a": 1}`)) == RunID([]byte(`{"a": 2}`)) {
		t.Error("two contents have one id")
	}
}

// TestMergeRefusals: the same run twice, a bench run with a sweep, a
// record without its wall-clock start and end, an empty input.
func TestMergeRefusals(t *testing.T) {
	bench, sweep := schema1(t, "bench.json"), schema1(t, "sweep.json")
	for _, c := range []struct {
		name   string
		inputs [][]byte
		want   string
	}{
		{"same run", [][]byte{bench, bench}, "hold the same run"},
		{"bench and sweep", [][]byte{bench, sweep}, "cannot merge a bench run with a sweep"},
		{"no wall clock", [][]byte{[]byte(`{"schema": 1}`)}, "no wall-clock start and end"},
		{"empty", [][]byte{nil}, "empty"},
	} {
		m := New(Options{})
		var err error
		for i, in := range c.inputs {
			if err = m.Read([]string{"a.json", "b.json"}[i], bytes.NewReader(in)); err != nil {
				break
			}
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestMergeBench: two generators' runs merge into one record whose
// requests are theirs, with a generator row each; several runs in one
// input are named FILE#K.
func TestMergeBench(t *testing.T) {
	a, b := schema1(t, "bench.json"), schema1(t, "bench-b.json")
	m := New(Options{Force: true})
	if err := m.Read("ab.json", bytes.NewReader(append(append([]byte{}, a...), b...))); err != nil {
		t.Fatal(err)
	}
	d, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	run := d.(*document.MergedRun)
	var want int64
	for _, raw := range [][]byte{a, b} {
		in, err := Decode("x", raw)
		if err != nil {
			t.Fatal(err)
		}
		want += in.Record.Counts.Complete
	}
	if run.Record.Counts.Complete != want || len(run.Generators) != 2 {
		t.Fatalf("merged %d requests in %d generators, want %d in 2", run.Record.Counts.Complete, len(run.Generators), want)
	}
	if run.Generators[0].File != "ab.json#1" || run.Generators[1].File != "ab.json#2" {
		t.Errorf("generators %q, %q: want ab.json#1, ab.json#2", run.Generators[0].File, run.Generators[1].File)
	}
}

// TestMergeSweepLevels: sweeps merge level by level; a level that one
// file lacks is refused, or left out and said with Force.
func TestMergeSweepLevels(t *testing.T) {
	a, b := schema1(t, "sweep.json"), schema1(t, "sweep-b.json")
	in := func(name string, raw []byte) Input {
		i, err := Decode(name, raw)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	ins := []Input{in("a.json", a), in("b.json", b)}
	ms, err := Sweeps(ins, Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms.Levels) != len(ins[0].Sweep.Levels) || len(ms.Generators) != 2 {
		t.Errorf("levels %v, %d generators", ms.Levels, len(ms.Generators))
	}
	// b without its last level.
	short := in("b.json", b)
	sw := *short.Sweep
	sw.Series = append([]document.SweepSeries{}, sw.Series...)
	se := &sw.Series[0]
	se.Levels, se.Records = se.Levels[:len(se.Levels)-1], se.Records[:len(se.Records)-1]
	short.Sweep = &sw
	if _, err := Sweeps([]Input{ins[0], short}, Options{}); err == nil || !strings.Contains(err.Error(), "in 1 of 2 files only") {
		t.Errorf("a level one file lacks: %v", err)
	}
	ms, err = Sweeps([]Input{ins[0], short}, Options{Force: true})
	if err != nil || !ms.Info.Forced || !strings.Contains(strings.Join(ms.Info.PlanDifferences, "; "), "left out: not in every file") {
		t.Errorf("forced: %v, %+v", err, ms.Info)
	}
}

// TestReadFile: files are read by name, "-" from stdin; one file named
// twice, however spelt, is refused before its runs count twice; a file
// that is not there is an error.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	if err := os.WriteFile(a, schema1(t, "bench.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := New(Options{Force: true})
	if err := m.ReadFile(a, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.ReadFile("-", bytes.NewReader(schema1(t, "bench-b.json"))); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, ".", "..", filepath.Base(dir), "a.json")
	if err := m.ReadFile(again, nil); err == nil || !strings.Contains(err.Error(), "are the same file") {
		t.Errorf("the same file twice: %v, want it refused", err)
	}
	if err := m.ReadFile(filepath.Join(dir, "none.json"), nil); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("a missing file: %v, want an error naming it", err)
	}
	d, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	if gens := d.(*document.MergedRun).Generators; len(gens) != 2 || gens[1].File != "-" {
		t.Errorf("generators %+v: want the file and stdin", gens)
	}
}
