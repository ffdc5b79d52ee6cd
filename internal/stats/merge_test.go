package stats

import (
	"fmt"
	"testing"
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
