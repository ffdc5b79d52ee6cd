package studyfile

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/backbench/backbench/internal/load"
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
		// As capacity's --confirm: 0 is no confirmation.
		if me.Confirm = p.duration(v.val, "measure confirm", false); me.Confirm == 0 {
			me.Confirm = -1
		}
	}
	if v, ok := m["memory"]; ok {
		s := p.scalar(v.val, "measure memory")
		b, err := load.ParseSize(s)
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
