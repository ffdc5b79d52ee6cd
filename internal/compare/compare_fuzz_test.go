package compare

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadSaved: whatever a file holds, Load either refuses it with an
// error or reads it, and then compares it with itself without
// panicking, every comparison with one of the verdict words and nothing
// differing.
func FuzzLoadSaved(f *testing.F) {
	for _, seed := range []string{
		`{"target": {"url": "fcgi://x/"}, "requests_per_second": 1, "percentiles_ms": {"99": 2}}`,
		`{"target": {"url": "fcgi://x/"}, "requests_per_second": 1, "trials": [null]}`,
		`{"target": {"url": "fcgi://x/"}, "requests_per_second": 1, "trials": []}`,
		`{"levels": [1], "series": [{"label": "a", "levels": [{"concurrency_level": 1, "requests_per_second": 3}]}]}`,
		`{"levels": [1], "series": [{"label": "a", "levels": []}, {"label": "a"}]}`,
		`{"levels": [1], "series": [{"label": "a", "levels": [{"trials": [{"schema": 1}]}]}]}`,
		`[]`, `null`, `{"series": 1, "levels": 2}`,
	} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "f.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sf, err := Load(p)
		if err != nil {
			return
		}
		var notes []string
		cs, tcs := pairFiles(sf, sf, 0.02, &notes, nil)
		for _, c := range append(cs, tcs...) {
			switch c.Verdict {
			case "faster", "slower", "lower", "higher", "smaller", "larger", "same", "undecided", "none":
			default:
				t.Fatalf("verdict %q", c.Verdict)
			}
		}
		if d := sf.differences(sf); len(d) > 0 {
			t.Fatalf("a file differs from itself: %q", d)
		}
	})
}
