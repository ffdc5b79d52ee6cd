package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/gate"
)

// finiteValue is a pflag Value for a float64 that must be a finite
// number: NaN, Inf and values beyond float64 are refused when the flag is
// parsed, so that a bad number is a usage error before any load, never a
// run whose figures are NaN or a JSON encoding that fails at the end.
type finiteValue struct{ p *float64 }

// newFinite returns a finiteValue for p, set to def.
func newFinite(p *float64, def float64) *finiteValue {
	*p = def
	return &finiteValue{p}
}

func (v *finiteValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}

func (v *finiteValue) Set(s string) error {
	f, err := parseFinite(s)
	if err != nil {
		return err
	}
	*v.p = f
	return nil
}

func (v *finiteValue) Type() string { return "float" }

// parseFinite reads a finite float64.
func parseFinite(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("want a finite number")
	}
	return f, nil
}

// parseStopRate reads "0.05" or "5%".
func parseStopRate(s string) (float64, error) { return parseRatio("--stop-error-rate", s) }

// parseRatio reads the value of flag name, a ratio ("0.05") or a
// percentage ("5%"), from 0 to 1.
func parseRatio(name, s string) (float64, error) {
	v, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	f, err := strconv.ParseFloat(v, 64)
	if err == nil && pct {
		f /= 100
	}
	if err != nil || !(f >= 0 && f <= 1) {
		return 0, usagef("bad %s %q: want a ratio from 0 to 1 or a percentage (5%%)", name, s)
	}
	return f, nil
}

// parsePercent reads "2%" or "0.02" as a fraction from 0 to below 1.
func parsePercent(flag, s string) (float64, error) {
	f, err := parseStopRate(s)
	if err != nil || f >= 1 {
		return 0, usagef("bad %s %q: want a percentage from 0%% to below 100%% (2%%) or a fraction (0.02)", flag, s)
	}
	return f, nil
}

// parseFailOn reads --fail-on (nil rules when not given); a bad rule is a
// usage error.
func parseFailOn(fs *pflag.FlagSet, spec string) ([]gate.Rule, error) {
	if !fs.Changed("fail-on") {
		return nil, nil
	}
	rules, err := gate.Parse(spec)
	if err != nil {
		return nil, usagef("bad --fail-on: %v", err)
	}
	return rules, nil
}
