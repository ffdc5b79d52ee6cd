package stats_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/stats"
)

// TestEncodeJSONNonFinite encodes a summary and a record holding NaN and
// ±Inf in a field, a map and a nested pointer: no error, valid JSON with
// the finite stand-ins, and the same bytes as json.Encoder for a finite
// value.
func TestEncodeJSONNonFinite(t *testing.T) {
	s := &stats.Summary{RequestsPerSecond: math.NaN(), Percentiles: map[string]float64{"50": math.Inf(1), "99": 2}}
	rec := &stats.Record{Plan: stats.Plan{Shape: stats.Shape{Rate: math.Inf(-1)}}}
	v := struct {
		*stats.Summary
		Record *stats.Record `json:"record"`
	}{s, rec}
	var b bytes.Buffer
	if err := stats.EncodeJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	if s.RequestsPerSecond != 0 || s.Percentiles["50"] != math.MaxFloat64 || s.Percentiles["99"] != 2 || rec.Plan.Rate != -math.MaxFloat64 {
		t.Errorf("not made finite: %v %v %v", s.RequestsPerSecond, s.Percentiles, rec.Plan.Rate)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	if b.String() != want.String() {
		t.Error("stats.EncodeJSON differs from json.Encoder on finite values")
	}
	if !strings.HasSuffix(b.String(), "}\n") {
		t.Error("no final newline")
	}
}
