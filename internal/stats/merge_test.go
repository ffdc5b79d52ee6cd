package stats

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestMergeNotesLinear merges 100,000 distinct notes (and each again): the
// union keeps them once each, in the order first seen. (The old search of
// the slice per note took 2.1 s for 40,000; BenchmarkMergeNotes shows the
// time now grows linearly.)
func TestMergeNotesLinear(t *testing.T) {
	a, b := mergeableRecords(t, 100_000)
	m, err := Merge(a, b, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Notes) != 150_000 {
		t.Fatalf("%d notes, want 150000", len(m.Notes))
	}
	for i, n := range m.Notes {
		if want := fmt.Sprintf("note %d", i); n != want {
			t.Fatalf("note %d is %q, want %q", i, n, want)
		}
	}
}

// mergeableRecords returns two records of one plan whose notes are
// "note 0".."note n-1" and "note n/2".."note 3n/2-1".
func mergeableRecords(t testing.TB, n int) (*Record, *Record) {
	a := &Record{Schema: Schema}
	b := &Record{Schema: Schema}
	for i := range n {
		a.Notes = append(a.Notes, fmt.Sprintf("note %d", i))
		b.Notes = append(b.Notes, fmt.Sprintf("note %d", i+n/2))
	}
	return a, b
}

// BenchmarkMergeNotes merges records of n notes each: ns/op grows as n.
func BenchmarkMergeNotes(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		x, y := mergeableRecords(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for range b.N {
				if _, err := Merge(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// planned returns a record of one plan that ran from start for d, with n
// complete requests, concurrency c and an open-model rate.
func planned(start time.Time, d time.Duration, n int64, c int, rate float64) *Record {
	r := &Record{Schema: Schema, StartedAt: Wall{start}, EndedAt: Wall{start.Add(d)}, Elapsed: d,
		Plan:   Plan{Shape: Shape{Concurrency: c, Requests: n, Rate: rate}, Target: TargetInfo{URL: "http://x/", Protocol: "http"}, Method: "GET"},
		Client: ClientHealth{CPUUserSeconds: 1, CPUSysSeconds: 0.5, CPUPercent: 40, Cores: 2, SchedulerLateMaxMs: float64(c), Warnings: []string{"busy"}}}
	r.Counts.Complete = n
	return r
}

// TestPlanDiff: the one rule of the same plan: the budget may differ,
// the concurrency and anything else may not; a record without wire words
// is of the plan of one with them.
func TestPlanDiff(t *testing.T) {
	t0 := time.Unix(1_764_556_800, 0)
	a := planned(t0, time.Second, 100, 2, 0)
	for _, tc := range []struct {
		name string
		edit func(p *Plan)
		want []string
	}{
		{"same", func(*Plan) {}, nil},
		{"budget", func(p *Plan) { p.Requests = 7 }, nil},
		{"old record without wire", func(p *Plan) { p.Wire = nil }, nil},
		{"empty list", func(p *Plan) { p.Upstreams = []string{} }, nil},
		{"concurrency", func(p *Plan) { p.Concurrency = 4 }, []string{"concurrency 2 vs 4"}},
		{"keep-alive", func(p *Plan) { p.KeepAlive = true }, []string{"keep_alive false vs true"}},
		{"wire", func(p *Plan) { p.Wire = &Wire{Protocol: "other"} }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.Plan.Wire = &Wire{Protocol: "HTTP/1.1"}
			b := a.Plan
			tc.edit(&b)
			got := PlanDiff(&a.Plan, &b)
			if tc.name == "wire" {
				if len(got) != 1 || !strings.HasPrefix(got[0], "wire ") {
					t.Errorf("wire words differ: %q", got)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PlanDiff = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPlanKeysAsSaved: the keys PlanDiff compares are the saved JSON
// object's, key for key and value for value, whether a field is set,
// empty or omitted.
func TestPlanKeysAsSaved(t *testing.T) {
	full := planned(time.Unix(1_764_556_800, 0), time.Second, 100, 2, 5).Plan
	full.Upstreams, full.Balance, full.Stages, full.Ramp = []string{"a", "b"}, "rr", []Stage{{}}, true
	full.HTTPVersion, full.ConnectionHeader, full.Wire = "1.1", "close", &Wire{Protocol: "HTTP/1.1"}
	for name, p := range map[string]Plan{"zero": {}, "planned": planned(time.Unix(0, 0), time.Second, 1, 1, 0).Plan,
		"every field": full, "empty lists": {Upstreams: []string{}, Shape: Shape{Stages: []Stage{}}}} {
		j, err := json.Marshal(&p)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(j, &want); err != nil {
			t.Fatal(err)
		}
		if got := planKeys(&p); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: planKeys = %s, want %s", name, got, want)
		}
	}
}

// TestMergeTogether: generators that ran together: concurrency, budgets,
// rates and the client's CPU add up, the time is the window from the
// earliest start to the latest end, and the overlap is the part of it
// every run covers.
func TestMergeTogether(t *testing.T) {
	t0 := time.Unix(1_764_556_800, 0)
	a, b := planned(t0, 2*time.Second, 100, 2, 50), planned(t0.Add(time.Second), 2*time.Second, 300, 2, 50)
	m := Merger{Policy: Together}
	if err := m.AddFrom("a", a); err != nil {
		t.Fatal(err)
	}
	if err := m.AddFrom("b", b); err != nil {
		t.Fatal(err)
	}
	r := m.Record()
	if r.Plan.Concurrency != 4 || r.Plan.Requests != 400 || r.Plan.Rate != 100 || r.Elapsed != 3*time.Second || r.Counts.Complete != 400 {
		t.Errorf("plan %+v, elapsed %v, complete %d", r.Plan, r.Elapsed, r.Counts.Complete)
	}
	if c := r.Client; c.CPUUserSeconds != 2 || c.CPUPercent != 80 || c.Cores != 4 || c.SchedulerLateMaxMs != 2 ||
		!reflect.DeepEqual(c.Warnings, []string{"a: busy", "b: busy"}) {
		t.Errorf("client %+v", c)
	}
	if o := m.Overlap(); math.Abs(o-1.0/3) > 1e-9 {
		t.Errorf("overlap %v, want 1/3", o)
	}
	one := Merger{}
	one.Add(a)
	if r := one.Record(); r.Elapsed != 2*time.Second || r.Client.CPUPercent != 40 || one.Overlap() != 1 {
		t.Errorf("one run: elapsed %v, client %+v, overlap %v", r.Elapsed, r.Client, one.Overlap())
	}
}

// TestMergeInTurn: trials that ran one after the other: their times add
// up, the concurrency and the rate are a trial's, the client is the
// first trial's.
func TestMergeInTurn(t *testing.T) {
	t0 := time.Unix(1_764_556_800, 0)
	a, b := planned(t0, 2*time.Second, 100, 2, 50), planned(t0.Add(5*time.Second), 3*time.Second, 100, 2, 50)
	r, err := MergeAs(InTurn, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Plan.Concurrency != 2 || r.Plan.Requests != 200 || r.Plan.Rate != 50 || r.Elapsed != 5*time.Second ||
		r.Client.CPUPercent != 40 || r.Counts.Complete != 200 {
		t.Errorf("plan %+v, elapsed %v, client %+v", r.Plan, r.Elapsed, r.Client)
	}
}

// TestMergeForce: a record of another plan is refused with its
// differences, or, with Force, merged under the first plan with them
// kept, once each, and per-upstream parts dropped when their numbers
// differ.
func TestMergeForce(t *testing.T) {
	t0 := time.Unix(1_764_556_800, 0)
	a, b := planned(t0, time.Second, 100, 2, 0), planned(t0, time.Second, 100, 4, 0)
	a.Plan.Upstreams, a.Upstreams = []string{"u1"}, []UpstreamRecord{{Address: "u1", Complete: 100}}
	var pe *PlanError
	if _, err := Merge(a, b); !errors.As(err, &pe) || len(pe.Differences) == 0 {
		t.Fatalf("other plan merged: %v", err)
	}
	m := Merger{Force: true}
	for _, r := range []*Record{a, b, b} {
		if err := m.AddFrom("f", r); err != nil {
			t.Fatal(err)
		}
	}
	r := m.Record()
	if r.Plan.Concurrency != 10 || r.Counts.Complete != 300 || r.Upstreams != nil || r.Plan.Upstreams != nil {
		t.Errorf("forced: plan %+v, complete %d, upstreams %v", r.Plan, r.Counts.Complete, r.Upstreams)
	}
	if d := m.Differences(); len(d) != 2 || !strings.HasPrefix(d[0], "f: concurrency 2 vs 4") {
		t.Errorf("differences %q", d)
	}
}
