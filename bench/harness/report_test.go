package main

import "testing"

// TestMedian: odd and even counts, unsorted input left as it was.
func TestMedian(t *testing.T) {
	xs := []float64{5, 1, 3}
	if got := median(xs); got != 3 {
		t.Fatalf("median(5,1,3) = %v, want 3", got)
	}
	if xs[0] != 5 {
		t.Fatal("median sorted its input")
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Fatalf("median(4,1,3,2) = %v, want 2.5", got)
	}
	if got := median(nil); got != 0 {
		t.Fatalf("median() = %v, want 0", got)
	}
}

// TestRatios: the median of the per-round ratios, not the ratio of the
// medians: a round where both ran slow counts as one round.
func TestRatios(t *testing.T) {
	m := func(rps float64, requests int64, cpu float64) measure {
		return measure{requests: requests, rps: rps, cpu: cpu}
	}
	x := []measure{m(100, 1000, 0.01), m(50, 1000, 0.02), m(120, 1000, 0.01)}
	y := []measure{m(50, 1000, 0.02), m(25, 1000, 0.04), m(100, 1000, 0.01)}
	rps, cpu := ratios(x, y)
	if rps != 2 || cpu != 0.5 {
		t.Fatalf("ratios = %v, %v; want 2, 0.5", rps, cpu)
	}
}

// TestJudge: each part of a target gets its own PASS or MISS; a pair
// without a target gets none.
func TestJudge(t *testing.T) {
	p := pair{need: 1.1, maxCPU: 0.9}
	if target, v := judge(p, 1.2, 0.95); target != "req/s >= 1.1x, CPU/req <= 0.9x" || v != "req/s PASS, CPU MISS" {
		t.Fatalf("judge = %q, %q", target, v)
	}
	if _, v := judge(pair{maxCPU: 1.1}, 0.5, 1.1); v != "CPU PASS" {
		t.Fatalf("judge CPU only = %q", v)
	}
	if _, v := judge(pair{}, 1, 1); v != "-" {
		t.Fatalf("judge without a target = %q", v)
	}
}
