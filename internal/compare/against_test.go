package compare

import (
	"os"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/gate"
)

// readDoc reads a schema-1 file of internal/document's testdata as the
// result model.
func readDoc(t *testing.T, name string) document.Result {
	t.Helper()
	path := "../document/testdata/schema1/" + name
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := document.Read(path, b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAgainst: a run compares with a saved baseline as the two files
// would; rules judge it into a gate, no rules leave none; a run with
// nothing to pair is an error.
func TestAgainst(t *testing.T) {
	base := load(t, "bench-repeat.json")
	rules, err := gate.Parse("req/s slower, p99 higher")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		run      string
		rules    []gate.Rule
		wantGate bool
		wantErr  string
	}{
		{"no rules", "bench-repeat-b.json", nil, false, ""},
		{"rules", "bench-repeat-b.json", rules, true, ""},
		{"nothing to pair", "probe.json", rules, false, "new.json is not a bench or sweep result"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Against(base, "new.json", readDoc(t, tc.run), 0.02, tc.rules, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Files) != 2 || res.Files[1] != "new.json" || len(res.Comparisons) == 0 {
				t.Errorf("files %q, %d comparisons", res.Files, len(res.Comparisons))
			}
			if (res.Gate != nil) != tc.wantGate {
				t.Fatalf("gate %+v, want one: %v", res.Gate, tc.wantGate)
			}
			if res.Gate != nil && len(res.Gate.Rules) != 2 {
				t.Errorf("gate rules %q", res.Gate.Rules)
			}
		})
	}
}
