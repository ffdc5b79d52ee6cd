package load

import (
	"strings"
	"testing"
	"time"
)

// TestParseSize reads sizes and refuses what is not one.
func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"2GiB": 2 << 30, "2G": 2 << 30, "512MiB": 512 << 20, "1.5GB": 1.5e9,
		"1000": 1000, " 64 kib ": 64 << 10, "3TB": 3e12} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1GiB", "2 lots", "0", "1e400", "NaN", "2GiBs", "99999999TiB"} {
		if got, err := ParseSize(in); err == nil || !strings.Contains(err.Error(), "want a size") {
			t.Errorf("ParseSize(%q) = %d, %v; want an error", in, got, err)
		}
	}
}

// TestParseSeconds reads seconds and durations and refuses the rest.
func TestParseSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{"30": 30 * time.Second, "2.5": 2500 * time.Millisecond, "0": 0, "0s": 0,
		"500ms": 500 * time.Millisecond, " 1m30s ": 90 * time.Second, "1h": time.Hour, "1e9": 1e9 * time.Second} {
		if got, err := ParseSeconds(in); err != nil || got != want {
			t.Errorf("ParseSeconds(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "-1s", "NaN", "Inf", "1e10", "1e400", "300000h", "5 s", "x"} {
		if got, err := ParseSeconds(in); err == nil {
			t.Errorf("ParseSeconds(%q) = %v; want an error", in, got)
		}
	}
}

// TestParseRatio reads ratios and percentages, and ParsePercent refuses
// 100%.
func TestParseRatio(t *testing.T) {
	for in, want := range map[string]float64{"0": 0, "0.05": 0.05, "5%": 0.05, " 100% ": 1, "1": 1} {
		if got, err := ParseRatio(in); err != nil || got != want {
			t.Errorf("ParseRatio(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "%", "-1%", "101%", "1.5", "NaN", "x"} {
		if got, err := ParseRatio(in); err == nil {
			t.Errorf("ParseRatio(%q) = %v; want an error", in, got)
		}
	}
	for in, ok := range map[string]bool{"2%": true, "0": true, "0.99": true, "100%": false, "1": false, "-2%": false} {
		if _, err := ParsePercent(in); (err == nil) != ok {
			t.Errorf("ParsePercent(%q): error %v, want accepted %v", in, err, ok)
		}
	}
}

func TestSeconds(t *testing.T) {
	good := []struct {
		in   string
		want time.Duration
	}{
		{"30", 30 * time.Second}, {" 2.5 ", 2500 * time.Millisecond}, {"0", 0}, {"500ms", 500 * time.Millisecond},
		{"1m", time.Minute}, {"1e9", 1e9 * time.Second},
	}
	for _, c := range good {
		var d time.Duration
		v := NewSeconds(&d, time.Hour)
		if err := v.Set(c.in); err != nil || d != c.want {
			t.Errorf("%q: %v, %v; want %v", c.in, d, err, c.want)
		}
	}
	for _, in := range []string{"NaN", "nan", "Inf", "-Inf", "-1", "1e10", "1e400", "-1s", "300000h", "x", ""} {
		var d time.Duration
		if err := NewSeconds(&d, time.Second).Set(in); err == nil || d != time.Second {
			t.Errorf("%q accepted: %v", in, d)
		}
	}
	var d time.Duration
	v := NewSeconds(&d, 1500*time.Millisecond)
	if v.String() != "1.5" || v.Type() != "seconds" || (&Seconds{}).String() != "0" {
		t.Errorf("String %q, Type %q", v.String(), v.Type())
	}
}
