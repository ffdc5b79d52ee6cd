package studyfile

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// parseMeasure reads the measurement.
func (p *parser) parseMeasure(key, n *yaml.Node) {
	m, _ := p.mapping(n, "measure", measureKeys)
	n = key // the position of what is missing
	me := &p.s.Measure
	me.Repeat = 1
	k, ok := m["kind"]
	if !ok {
		p.fail(n, "measure has no kind: sweep, bench or capacity")
	}
	me.Kind = p.scalar(k.val, "measure kind")
	if me.Kind != MeasureSweep && me.Kind != MeasureBench && me.Kind != MeasureCapacity {
		p.fail(k.val, "measure kind %q: want sweep, bench or capacity", me.Kind)
	}
	if c, ok := m["concurrency"]; ok {
		me.Levels = p.levels(c.val)
	}
	switch c, has := m["concurrency"]; me.Kind {
	case MeasureSweep:
		if !has {
			p.fail(n, "measure: a sweep needs concurrency levels (e.g. [1, 10, 50] or \"1:500:10\")")
		}
	case MeasureBench:
		if !has {
			p.fail(n, "measure: a bench needs a concurrency level (e.g. concurrency: 10)")
		}
		if len(me.Levels) != 1 {
			p.fail(c.val, "measure: a bench runs one concurrency level, not %d (a sweep runs several)", len(me.Levels))
		}
	case MeasureCapacity:
		if has && len(me.Levels) != 1 {
			p.fail(c.val, "measure: a capacity search takes at most one concurrency level, not %d", len(me.Levels))
		}
	}
	if r, ok := m["requests"]; ok {
		me.Requests = p.integer(r.val, "measure requests", 1, 1<<50)
		if me.Kind == MeasureCapacity {
			p.fail(r.key, "measure: a capacity search's steps are timed: give duration, not requests")
		}
	}
	if r, ok := m["requests"]; ok && len(me.Levels) > 0 && int64(me.Levels[len(me.Levels)-1]) > me.Requests {
		p.fail(r.val, "measure requests: %d is fewer than the highest concurrency level, %d (each worker makes at least one request)", me.Requests, me.Levels[len(me.Levels)-1])
	}
	if d, ok := m["duration"]; ok {
		me.Duration = p.duration(d.val, "measure duration", true)
	}
	if me.Requests == 0 && me.Duration == 0 {
		if me.Kind == MeasureCapacity {
			p.fail(n, "measure: a capacity search needs duration (of each step)")
		}
		p.fail(n, "measure needs requests or duration (per level and trial)")
	}
	if r, ok := m["repeat"]; ok {
		me.Repeat = int(p.integer(r.val, "measure repeat", 1, 1000))
	}
	if w, ok := m["warmup"]; ok {
		me.Warmup = p.integer(w.val, "measure warmup", 0, 1<<50)
	}
	if v, ok := m["noise"]; ok {
		s := p.scalar(v.val, "measure noise")
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(f > 0 && f < 1) {
			p.fail(v.val, "measure noise: want a fraction between 0 and 1 (0.02 for 2%%), not %q", s)
		}
		me.Noise = f
	}
	if t, ok := m["timeout"]; ok {
		me.Timeout = p.duration(t.val, "measure timeout", true)
	}
	if s, ok := m["slo"]; ok {
		list, nodes := p.stringList(s.val, "measure slo", true)
		for j, o := range list {
			if msg := checkObjective(o); msg != "" {
				p.fail(nodes[j], "measure slo %q: %s", o, msg)
			}
		}
		me.SLO = list
	}
	if me.Kind == MeasureCapacity && len(me.SLO) == 0 {
		p.fail(n, "measure: a capacity search needs slo, its objectives (e.g. slo: [\"p99<=100ms\"])")
	}
	p.parseSizing(m, n)
}

// objective is the loose shape of an objective: a metric, <= and a value.
var objective = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z0-9.]*)\s*<=\s*(\S+)\s*$`)

// checkObjective returns what is wrong with an objective, "" when nothing:
// METRIC<=DURATION (p99<=100ms, mean<=20ms) or errors<=PERCENT.
func checkObjective(o string) string {
	m := objective.FindStringSubmatch(o)
	if m == nil {
		return "want METRIC<=LIMIT, e.g. p99<=100ms or errors<=1%"
	}
	if strings.ToLower(m[1]) == "errors" {
		v, err := strconv.ParseFloat(strings.TrimSuffix(m[2], "%"), 64)
		if err != nil || !strings.HasSuffix(m[2], "%") || v < 0 || v > 100 {
			return "errors take a percentage, e.g. errors<=1%"
		}
		return ""
	}
	if d, err := time.ParseDuration(m[2]); err != nil || d <= 0 {
		return fmt.Sprintf("%s takes a duration, e.g. %s<=100ms", m[1], m[1])
	}
	return ""
}
