package studyfile

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/backbench/backbench/internal/load"
)

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is an empty value (key: or key: ~).
func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// kindName names a node's kind for messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return "a value"
	}
	return "something else"
}

// pair is one key and value of a map.
type pair struct {
	key, val *yaml.Node
}

// mapping checks that n is a map whose keys are among known (nil: any),
// each once, and returns its entries by key and in order. YAML's merge
// key (<<: *anchor) brings in the entries of other maps that n does not
// have itself.
func (p *parser) mapping(n *yaml.Node, what string, known []string) (map[string]pair, []pair) {
	return p.mappingDepth(n, what, known, 0)
}

// mappingDepth is mapping, depth merges down.
func (p *parser) mappingDepth(n *yaml.Node, what string, known []string, depth int) (map[string]pair, []pair) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		p.fail(n, "%s: want a map, not %s", what, kindName(n))
	}
	byKey := map[string]pair{}
	var order []pair
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			p.fail(k, "%s: a key must be a name, not %s", what, kindName(k))
		}
		if k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if known != nil && !contains(known, k.Value) {
			if hint := suggest(k.Value, known); hint != "" {
				p.fail(k, "unknown key %q in %s%s", k.Value, what, hint)
			}
			p.fail(k, "unknown key %q in %s (known: %s)", k.Value, what, strings.Join(known, ", "))
		}
		if first, dup := byKey[k.Value]; dup {
			p.fail(k, "duplicate key %q in %s (first at %d:%d)", k.Value, what, first.key.Line, first.key.Column)
		}
		byKey[k.Value] = pair{k, v}
		order = append(order, pair{k, v})
	}
	for _, m := range merges {
		if depth >= 8 {
			p.fail(m, "%s: merges (<<) nested more than 8 deep", what)
		}
		from := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			from = p.sequence(m, what+" <<")
		}
		for _, f := range from {
			_, entries := p.mappingDepth(f, what, known, depth+1)
			for _, e := range entries {
				if _, ok := byKey[e.key.Value]; !ok {
					byKey[e.key.Value] = e
					order = append(order, e)
				}
			}
		}
	}
	return byKey, order
}

// sequence checks that n is a list and returns its items.
func (p *parser) sequence(n *yaml.Node, what string) []*yaml.Node {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		p.fail(n, "%s: want a list, not %s", what, kindName(n))
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = resolve(c)
	}
	return out
}

// scalar checks that n is a single value and returns it as written ("" for
// an empty value).
func (p *parser) scalar(n *yaml.Node, what string) string {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode {
		p.fail(n, "%s: want a single value, not %s", what, kindName(n))
	}
	if isNull(n) {
		return ""
	}
	return n.Value
}

// required returns a non-empty value.
func (p *parser) required(n *yaml.Node, what string) string {
	v := p.scalar(n, what)
	if strings.TrimSpace(v) == "" {
		p.fail(n, "%s: needs a value", what)
	}
	return v
}

// integer reads a whole number in [lo, hi].
func (p *parser) integer(n *yaml.Node, what string, lo, hi int64) int64 {
	v := p.scalar(n, what)
	i, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		p.fail(n, "%s: want a whole number, not %q", what, v)
	}
	if i < lo || i > hi {
		p.fail(n, "%s: %d is out of range (%d to %d)", what, i, lo, hi)
	}
	return i
}

// boolean reads true/false (also yes/no, on/off).
func (p *parser) boolean(n *yaml.Node, what string) bool {
	v := p.scalar(n, what)
	switch strings.ToLower(v) {
	case "true", "yes", "on":
		return true
	case "false", "no", "off":
		return false
	}
	p.fail(n, "%s: want true or false, not %q", what, v)
	return false
}

// duration reads a time as the commands' -t and -s read it
// (load.ParseSeconds: seconds, "30" or "2.5", or a duration, "500ms",
// "1m30s"), at least zero; more than zero when positive is set.
func (p *parser) duration(n *yaml.Node, what string, positive bool) time.Duration {
	v := p.scalar(n, what)
	d, err := load.ParseSeconds(v)
	if err != nil {
		p.fail(n, "%s %q: %v", what, v, err)
	}
	if positive && d == 0 {
		p.fail(n, "%s: must be greater than 0 seconds", what)
	}
	return d
}

// strings reads a list of values (or one value as a list of one when one
// is set).
func (p *parser) stringList(n *yaml.Node, what string, one bool) ([]string, []*yaml.Node) {
	n = resolve(n)
	if one && n.Kind == yaml.ScalarNode && !isNull(n) {
		return []string{n.Value}, []*yaml.Node{n}
	}
	items := p.sequence(n, what)
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = p.scalar(it, what)
	}
	return out, items
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest returns `, did you mean "x"?` for the known word closest to s.
func suggest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := distance(strings.ToLower(s), k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// distance is the Levenshtein distance of a and b (bytes), capped for long
// words.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
