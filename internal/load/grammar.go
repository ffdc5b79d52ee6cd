package load

// The grammar (this file, levels.go, size.go, cpus.go) reads the values
// that a command's flags and a study file both take, with one function
// each, so that a value means the same thing and is refused with the same words wherever it is written: concurrency
// levels (ParseLevels: sweep's -c, a study's concurrency), times in
// seconds or as durations (ParseSeconds: -t, -s, --confirm, a study's
// duration, timeout and confirm; Seconds, the flag Value that reads them),
// ratios and percentages (ParseRatio,
// ParsePercent: --stop-error-rate, --resolution, --noise, a study's
// noise) and sizes (ParseSize: study's --memory, a study's memory).
// Objectives (p99<=50ms) are read by internal/capacity (capacity.Parse),
// which owns their type.
//
// Its errors name no flag and no key: the caller says where the value
// came from ("--noise", "measure noise" at a line and column). Like the
// rest of package load, it imports nothing of the module, so that the study
// file's parser (internal/studyfile) and the command line
// (cmd/backbench, internal/plan) can both use it.

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// MaxSeconds is the longest time ParseSeconds reads, in seconds.
const MaxSeconds = 1e9

// ParseSeconds reads a time as ab's -t takes it, in seconds ("30",
// "2.5"), or as a Go duration ("500ms", "1m30s"), from 0 to MaxSeconds;
// NaN and negative times are refused.
func ParseSeconds(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil || strings.Contains(err.Error(), "out of range") {
		// !(f >= 0) also refuses NaN, which compares false to anything.
		if !(f >= 0) || f > MaxSeconds {
			return 0, errors.New("want seconds from 0 to 1e9")
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, errors.New("want seconds (30, 2.5) or a duration (500ms)")
	}
	if d > MaxSeconds*time.Second {
		return 0, errors.New("want seconds from 0 to 1e9")
	}
	return d, nil
}

// Seconds is a flag Value for a duration given in seconds ("30", "2.5") as
// ab takes it, or as a Go duration ("500ms", "1m"), from 0 to 1e9 s: the
// flags' reader of ParseSeconds (it implements pflag.Value without
// importing pflag).
type Seconds struct{ d *time.Duration }

// NewSeconds returns a Seconds for p, set to def.
func NewSeconds(p *time.Duration, def time.Duration) *Seconds {
	*p = def
	return &Seconds{p}
}

// String returns the duration in seconds.
func (v *Seconds) String() string {
	if v.d == nil {
		return "0"
	}
	return strconv.FormatFloat(v.d.Seconds(), 'f', -1, 64)
}

// Set reads seconds or a duration (ParseSeconds); NaN,
// negatives and more than 1e9 s are refused.
func (v *Seconds) Set(s string) error {
	d, err := ParseSeconds(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

// Type is the word help shows for the value.
func (v *Seconds) Type() string { return "seconds" }

// ParseRatio reads a ratio ("0.05") or a percentage ("5%") as a ratio
// from 0 to 1.
func ParseRatio(s string) (float64, error) {
	v, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	f, err := strconv.ParseFloat(v, 64)
	if err == nil && pct {
		f /= 100
	}
	if err != nil || !(f >= 0 && f <= 1) {
		return 0, errors.New("want a ratio from 0 to 1 or a percentage (5%)")
	}
	return f, nil
}

// ParsePercent reads a percentage ("2%") or a fraction ("0.02") as a
// fraction from 0 to below 1.
func ParsePercent(s string) (float64, error) {
	f, err := ParseRatio(s)
	if err != nil || f >= 1 {
		return 0, errors.New("want a percentage from 0% to below 100% (2%) or a fraction (0.02)")
	}
	return f, nil
}
