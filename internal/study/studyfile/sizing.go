package studyfile

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// SizingFactor returns the factor a capacity study sizes: its first
// backend-side factor other than transport (the pool size: workers,
// children, threads), or nil when it has none.
func (s *Study) SizingFactor() *Factor {
	for i := range s.Factors {
		f := &s.Factors[i]
		if f.Kind == KindBackend && f.Name != FactorTransport {
			return f
		}
	}
	return nil
}

// parseSizing reads the keys of a capacity study (confirm, memory) and
// checks that it has a factor to size. n is the measure's key, for what is
// missing.
func (p *parser) parseSizing(m map[string]pair, n *yaml.Node) {
	me := &p.s.Measure
	for _, k := range []string{"confirm", "memory"} {
		if v, ok := m[k]; ok && me.Kind != MeasureCapacity {
			p.fail(v.key, "measure %s: only a capacity search takes it", k)
		}
	}
	if v, ok := m["confirm"]; ok {
		me.Confirm = p.duration(v.val, "measure confirm", true)
	}
	if v, ok := m["memory"]; ok {
		s := p.scalar(v.val, "measure memory")
		b, err := ParseSize(s)
		if err != nil {
			p.fail(v.val, "measure memory: %v", err)
		}
		me.Memory = b
	}
	if me.Kind == MeasureCapacity && p.s.SizingFactor() == nil {
		where := n
		if k, ok := m["kind"]; ok {
			where = k.val
		}
		p.fail(where, "measure: a capacity study sizes a pool: it needs a backend-side factor with its levels (e.g. workers: [1, 2, 4]); %s", p.noSizing())
	}
}

// noSizing says what factors the study has instead of one to size.
func (p *parser) noSizing() string {
	if len(p.s.Factors) == 0 {
		return "it has none"
	}
	var names []string
	for _, f := range p.s.Factors {
		names = append(names, f.Name)
	}
	return "it has only " + strings.Join(names, ", ")
}

// sizeUnits are the units of ParseSize, in bytes.
var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1e3, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1e6, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1e9, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1e12, "tib": 1 << 40,
}

// ParseSize reads a size in bytes: a number and a unit, "2GiB", "512MiB",
// "1.5G" (K, M, G and T are powers of 1024, as KiB; KB, MB, GB and TB
// powers of 1000), or a bare number of bytes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mul, ok := sizeUnits[unit]
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || !(v > 0) || math.IsInf(v*mul, 0) || v*mul >= 1<<62 {
		return 0, fmt.Errorf("want a size, e.g. 2GiB, 512MiB or 1500MB, not %q", s)
	}
	return int64(v * mul), nil
}
