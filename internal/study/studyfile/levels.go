package studyfile

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ParseLevels reads a concurrency spec: comma-separated items, each a
// level ("16") or a range "start:end:step" that gives start, start+step,
// ... below end, and end itself ("1:500:10" gives 1, 11, ... 491, 500), as
// sweep's -c does. Levels are from 1 to MaxLevel.
func ParseLevels(spec string) ([]int, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("empty concurrency spec (want start:end:step like 1:500:10, or a list like 1,2,4)")
	}
	var levels []int
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		parts := strings.Split(item, ":")
		switch len(parts) {
		case 1:
			v, err := parseLevel(parts[0])
			if err != nil {
				return nil, err
			}
			levels = append(levels, v)
		case 3:
			start, err := parseLevel(parts[0])
			if err != nil {
				return nil, err
			}
			end, err := parseLevel(parts[1])
			if err != nil {
				return nil, err
			}
			step, err := parseLevel(parts[2])
			if err != nil {
				return nil, fmt.Errorf("bad step %q in %q (want 1 to %d)", parts[2], item, MaxLevel)
			}
			if end < start {
				return nil, fmt.Errorf("range %q ends before it starts", item)
			}
			for v := start; v < end; v += step {
				levels = append(levels, v)
			}
			levels = append(levels, end)
		default:
			return nil, fmt.Errorf("bad item %q (want N, or start:end:step like 1:500:10)", item)
		}
	}
	return levels, nil
}

// parseLevel reads one level.
func parseLevel(s string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v < 1 || v > MaxLevel {
		return 0, fmt.Errorf("bad level %q (want 1 to %d)", strings.TrimSpace(s), MaxLevel)
	}
	return v, nil
}

// levels reads measure's concurrency: one level, a spec string, or a list
// of levels and specs; the levels must increase strictly.
func (p *parser) levels(n *yaml.Node) []int {
	n = resolve(n)
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = p.sequence(n, "measure concurrency")
		if len(items) == 0 {
			p.fail(n, "measure concurrency: an empty list")
		}
	}
	var out []int
	for _, it := range items {
		s := p.scalar(it, "measure concurrency")
		ls, err := ParseLevels(s)
		if err != nil {
			p.fail(it, "measure concurrency: %v", err)
		}
		for _, v := range ls {
			if k := len(out); k > 0 && v <= out[k-1] {
				p.fail(it, "measure concurrency: the levels must increase (%d after %d)", v, out[k-1])
			}
			out = append(out, v)
		}
	}
	return out
}
