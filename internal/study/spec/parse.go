package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// parser holds the state of one Parse: the file, for positions, and the
// study as far as it is read.
type parser struct {
	file string
	src  []byte
	s    *Study
	// factor by name, for exclude, when and placeholders.
	factors map[string]*Factor
	// backendsKey is the position of the top-level backends key.
	backendsKey *yaml.Node
	excludeKey  *yaml.Node
	// placeholder uses per backend, for the checks that need the
	// configurations: name -> first node using it.
	uses []map[string]*use
	// portKeys holds each backend's port: key when it fixes a port.
	portKeys []*yaml.Node
}

// use is the first use of a placeholder in a backend.
type use struct {
	line, col int
}

// fail stops the parse with an error at n's position.
func (p *parser) fail(n *yaml.Node, format string, args ...any) {
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line, col = n.Line, max(n.Column, 1)
	}
	p.failAt(line, col, format, args...)
}

// failAt stops the parse with an error at line:col.
func (p *parser) failAt(line, col int, format string, args ...any) {
	panic(&Error{File: p.file, Line: line, Col: col, Msg: oneLine(fmt.Sprintf(format, args...))})
}

// yamlLine reads the line out of a yaml.v3 error message.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// decode reads the one YAML document of the file.
func (p *parser) decode() *yaml.Node {
	if len(p.src) > MaxFileSize {
		p.failAt(1, 1, "the study file is larger than %d KiB", MaxFileSize>>10)
	}
	p.checkBytes()
	dec := yaml.NewDecoder(bytes.NewReader(p.src))
	var root yaml.Node
	if err := p.yamlDecode(dec, &root); err != nil {
		if errors.Is(err, io.EOF) {
			p.failAt(1, 1, "the study file is empty: it needs question, factors, backends and measure")
		}
		p.yamlFail(err)
	}
	var next yaml.Node
	switch err := p.yamlDecode(dec, &next); {
	case err == nil:
		p.fail(&next, "a study file holds one YAML document: a second begins here")
	case !errors.Is(err, io.EOF):
		p.yamlFail(err)
	}
	return &root
}

// yamlDecode decodes one document, turning a panic of the YAML library
// into an error.
func (p *parser) yamlDecode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return dec.Decode(n)
}

// yamlFail turns a YAML syntax error into the study's one-line error.
func (p *parser) yamlFail(err error) {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		line, col := p.syntaxLine(m[2], max(line, 1))
		p.failAt(line, col, "YAML syntax: %s", m[2])
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	line, col := 1, 1
	if m := regexp.MustCompile(`^unknown anchor '(.*)' referenced$`).FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(p.src, []byte("*"+m[1])); i >= 0 {
			line, col = p.position(i)
		}
	}
	p.failAt(line, col, "YAML syntax: %s", msg)
}

// syntaxLine finds the line of a YAML syntax error, whose message names
// the line where the enclosing construct begins (or the line before it):
// the first line at which the file's beginning, up to and with that line,
// fails with the same problem. The column is that line's first character
// that is not a space. A long file, or a problem far from the line of the
// message, keeps the line of the message.
func (p *parser) syntaxLine(problem string, line int) (int, int) {
	const maxBytes, maxTries = 16 << 10, 200
	if len(p.src) > maxBytes {
		return line, 1
	}
	// The lines before the one the message names (or the one before it)
	// parse: start there.
	k := 0
	if bytes.Count(p.src, []byte("\n")) > maxTries {
		k = max(line-2, 0)
	}
	end := p.offset(k+1, 1)
	if end < 0 {
		return line, 1
	}
	for tries := 0; end < len(p.src) && tries < maxTries; tries++ {
		k++
		if j := bytes.IndexByte(p.src[end:], '\n'); j >= 0 {
			end += j + 1
		} else {
			end = len(p.src)
		}
		if prefixProblem(p.src[:end]) == problem {
			i := p.offset(k, 1)
			if i < 0 || i > end {
				return k, 1
			}
			text := p.src[i:end]
			col := 1 + len(text) - len(bytes.TrimLeft(text, " \t"))
			if len(bytes.TrimSpace(text)) == 0 {
				col = 1
			}
			return k, col
		}
	}
	return line, 1
}

// prefixProblem is the syntax problem of a YAML text without its line, ""
// when it parses.
func prefixProblem(data []byte) (problem string) {
	defer func() {
		if r := recover(); r != nil {
			problem = fmt.Sprint(r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 0; i < 2; i++ {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return ""
			}
			if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
				return m[2]
			}
			return err.Error()
		}
	}
	return ""
}

// checkBytes reports bytes YAML refuses, at their position: invalid UTF-8
// and control characters.
func (p *parser) checkBytes() {
	for i := 0; i < len(p.src); {
		r, size := utf8.DecodeRune(p.src[i:])
		if r == utf8.RuneError && size <= 1 {
			line, col := p.position(i)
			p.failAt(line, col, "the file is not UTF-8 (byte 0x%02x)", p.src[i])
		}
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || (r >= 0x7f && r <= 0x9f && r != 0x85) || r == 0xfffe || r == 0xffff {
			line, col := p.position(i)
			p.failAt(line, col, "the file holds a control character (%U)", r)
		}
		i += size
	}
}

// position is the 1-based line and column (in characters) of byte offset
// i of the file.
func (p *parser) position(i int) (line, col int) {
	i = min(max(i, 0), len(p.src))
	line = 1 + bytes.Count(p.src[:i], []byte("\n"))
	start := bytes.LastIndexByte(p.src[:i], '\n') + 1
	return line, 1 + utf8.RuneCount(p.src[start:i])
}

// offset is the byte offset of 1-based line and column, or -1.
func (p *parser) offset(line, col int) int {
	i := 0
	for l := 1; l < line; l++ {
		j := bytes.IndexByte(p.src[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
	}
	for c := 1; c < col; c++ {
		if i >= len(p.src) || p.src[i] == '\n' {
			return -1
		}
		_, size := utf8.DecodeRune(p.src[i:])
		i += size
	}
	return i
}

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

// duration reads a Go duration ("30s", "1m30s"), at least zero; positive
// when positive is set.
func (p *parser) duration(n *yaml.Node, what string, positive bool) time.Duration {
	v := p.scalar(n, what)
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		p.fail(n, "%s: want a duration like 30s, 500ms or 1m30s, not %q", what, v)
	}
	if d < 0 || (positive && d == 0) {
		p.fail(n, "%s: the duration must be more than zero, not %q", what, v)
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

// The keys of each part of the file.
var (
	topKeys     = []string{"question", "factors", "exclude", "backends", "measure"}
	factorKeys  = []string{"levels", "baseline"}
	backendKeys = []string{"name", "when", "command", "env", "files", "url", "verify", "exclusive", "port", "transport", "start_timeout", "stop", "insecure", "document_root", "headers"}
	fileKeys    = []string{"path", "content"}
	verifyKeys  = []string{"status", "body"}
	stopKeys    = []string{"signal", "grace"}
	measureKeys = []string{"kind", "concurrency", "requests", "duration", "repeat", "warmup", "noise", "timeout", "slo"}
)

// builtins are the placeholders every backend field may use.
var builtins = []string{"listen", "addr", "target", "port", "socket", "dir", "name"}

// validName is the shape of a factor's name (and so of a placeholder).
var validName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// parse reads the whole file.
func (p *parser) parse() *Study {
	doc := p.decode()
	root := doc
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			p.fail(doc, "the study file is empty: it needs question, factors, backends and measure")
		}
		root = doc.Content[0]
	}
	root = resolve(root)
	if isNull(root) {
		p.fail(root, "the study file is empty: it needs question, factors, backends and measure")
	}
	top, _ := p.mapping(root, "the study file", topKeys)
	missing := func(k string) {
		if _, ok := top[k]; !ok {
			p.fail(root, "the study file has no %s: it needs question, factors, backends and measure", k)
		}
	}
	p.s = &Study{Path: p.file}
	if q, ok := top["question"]; ok {
		p.s.Question = strings.TrimSpace(p.required(q.val, "question"))
		if strings.ContainsAny(p.s.Question, "\n\r") {
			p.fail(q.val, "question: one sentence, on one line")
		}
	}
	missing("factors")
	p.parseFactors(top["factors"])
	if e, ok := top["exclude"]; ok {
		p.excludeKey = e.key
		p.parseExclude(e.val)
	}
	if b, ok := top["backends"]; ok {
		p.backendsKey = b.key
		p.parseBackends(b.val)
	}
	if m, ok := top["measure"]; ok {
		p.parseMeasure(m.key, m.val)
	}
	missing("question")
	missing("backends")
	missing("measure")
	p.checkConfigurations()
	return p.s
}

// normalise returns a factor's level in its normal form: keepalive's
// on/off.
func normalise(factor, level string) string {
	if factor == FactorKeepalive {
		switch strings.ToLower(level) {
		case "on", "true", "yes":
			return "on"
		case "off", "false", "no":
			return "off"
		}
	}
	return level
}

// parseFactors reads the factors.
func (p *parser) parseFactors(f pair) {
	_, entries := p.mapping(f.val, "factors", nil)
	if len(entries) == 0 {
		p.fail(f.key, "factors: declare at least one factor, e.g. transport: [tcp, unix]")
	}
	p.factors = map[string]*Factor{}
	all, backend := 1, 1
	for _, e := range entries {
		name := e.key.Value
		if !validName.MatchString(name) {
			p.fail(e.key, "factor name %q: use letters, digits, _ and - (a letter first)", name)
		}
		if contains(builtins, name) {
			p.fail(e.key, "factor name %q is a built-in placeholder (%s): choose another", name, strings.Join(builtins, ", "))
		}
		what := "factor " + name
		fac := Factor{Name: name, Kind: KindBackend, Line: e.key.Line, Col: e.key.Column}
		if name == FactorKeepalive || name == FactorHTTP {
			fac.Kind = KindClient
		}
		var levels []*yaml.Node
		var baseline *yaml.Node
		if v := resolve(e.val); v.Kind == yaml.MappingNode {
			m, _ := p.mapping(v, what, factorKeys)
			lv, ok := m["levels"]
			if !ok {
				p.fail(e.key, "%s: needs levels", what)
			}
			levels = p.sequence(lv.val, what+" levels")
			if b, ok := m["baseline"]; ok {
				baseline = b.val
			}
		} else {
			levels = p.sequence(v, what+" (a list of levels, or {levels, baseline})")
		}
		for _, l := range levels {
			v := normalise(name, p.scalar(l, what+" level"))
			if strings.TrimSpace(v) == "" {
				p.fail(l, "%s: a level needs a value", what)
			}
			if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				p.fail(l, "%s: a level is one line of text", what)
			}
			switch name {
			case FactorKeepalive:
				if v != "on" && v != "off" {
					p.fail(l, "factor keepalive: level %q is not on or off", v)
				}
			case FactorHTTP:
				if v != "1.0" && v != "1.1" {
					p.fail(l, "factor http: level %q is not 1.0 or 1.1", v)
				}
			case FactorTransport:
				if v != TransportTCP && v != TransportUnix {
					p.fail(l, "factor transport: level %q is not tcp or unix", v)
				}
			}
			if contains(fac.Levels, v) {
				if written := p.scalar(l, what); written != v {
					p.fail(l, "%s: level %q (%s) is declared twice", what, written, v)
				}
				p.fail(l, "%s: level %q is declared twice", what, v)
			}
			fac.Levels = append(fac.Levels, v)
		}
		if len(fac.Levels) < 2 {
			p.fail(e.key, "%s has %d level: a factor needs at least two to compare", what, len(fac.Levels))
		}
		fac.Baseline = fac.Levels[0]
		if baseline != nil {
			b := normalise(name, p.scalar(baseline, what+" baseline"))
			if !contains(fac.Levels, b) {
				p.fail(baseline, "%s: baseline %q is not one of its levels (%s)", what, b, strings.Join(fac.Levels, ", "))
			}
			fac.Baseline = b
		}
		all *= len(fac.Levels)
		if fac.Kind == KindBackend {
			backend *= len(fac.Levels)
		}
		if all > MaxSeries {
			p.fail(e.key, "the factors make more than %d combinations", MaxSeries)
		}
		if backend > MaxConfigurations {
			p.fail(e.key, "the backend-side factors make more than %d configurations, a backend process each", MaxConfigurations)
		}
		p.s.Factors = append(p.s.Factors, fac)
	}
	for i := range p.s.Factors {
		p.factors[p.s.Factors[i].Name] = &p.s.Factors[i]
	}
}

// factorNames lists the factors for messages.
func (p *parser) factorNames(kind string) string {
	var names []string
	for _, f := range p.s.Factors {
		if kind == "" || f.Kind == kind {
			names = append(names, f.Name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// levelMap reads a map of factor -> level (exclude's entries and when).
func (p *parser) levelMap(n *yaml.Node, what string, backendOnly bool) map[string]string {
	_, entries := p.mapping(n, what, nil)
	out := map[string]string{}
	for _, e := range entries {
		f, ok := p.factors[e.key.Value]
		if !ok {
			p.fail(e.key, "%s: unknown factor %q (factors: %s)", what, e.key.Value, p.factorNames(""))
		}
		if backendOnly && f.Kind == KindClient {
			p.fail(e.key, "%s: %s is a client-side factor: every backend serves each of its levels (backend-side factors: %s)", what, f.Name, p.factorNames(KindBackend))
		}
		v := normalise(f.Name, p.scalar(e.val, what))
		if !contains(f.Levels, v) {
			p.fail(e.val, "%s: %q is not a level of %s (levels: %s)", what, v, f.Name, strings.Join(f.Levels, ", "))
		}
		out[f.Name] = v
	}
	return out
}

// parseExclude reads the exclusions.
func (p *parser) parseExclude(n *yaml.Node) {
	if isNull(n) {
		return
	}
	for _, it := range p.sequence(n, "exclude") {
		m := p.levelMap(it, "exclude", false)
		if len(m) == 0 {
			p.fail(it, "exclude: an empty entry would exclude every combination")
		}
		p.s.Exclude = append(p.s.Exclude, m)
	}
}

// signals are the stop signals by name.
var signals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT,
	"HUP": syscall.SIGHUP, "KILL": syscall.SIGKILL,
}

// parseBackends reads the backends.
func (p *parser) parseBackends(n *yaml.Node) {
	items := p.sequence(n, "backends")
	if len(items) == 0 {
		p.fail(p.backendsKey, "backends: declare at least one backend")
	}
	names := map[string]*yaml.Node{}
	for i, it := range items {
		b := p.parseBackend(it, i)
		if first, dup := names[b.Name]; dup {
			p.fail(it, "backend name %q is used twice (first at %d:%d)", b.Name, first.Line, first.Column)
		}
		names[b.Name] = it
		p.s.Backends = append(p.s.Backends, b)
	}
}

// parseBackend reads one backend.
func (p *parser) parseBackend(n *yaml.Node, i int) Backend {
	label := fmt.Sprintf("backend %d", i+1)
	if r := resolve(n); r.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(r.Content); j += 2 {
			if k, v := resolve(r.Content[j]), resolve(r.Content[j+1]); k.Value == "name" && v.Kind == yaml.ScalarNode && v.Value != "" && !isNull(v) {
				label = fmt.Sprintf("backend %q", oneLine(v.Value))
			}
		}
	}
	m, _ := p.mapping(n, label, backendKeys)
	b := Backend{
		Verify:       Verify{Status: DefaultStatus},
		Transport:    TransportTCP,
		StartTimeout: DefaultStartTimeout,
		StopSignal:   syscall.SIGTERM,
		Grace:        DefaultGrace,
		Line:         n.Line,
		Col:          n.Column,
	}
	uses := map[string]*use{}
	p.uses = append(p.uses, uses)
	nm, ok := m["name"]
	if !ok {
		p.fail(n, "backend %d has no name", i+1)
	}
	b.Name = strings.TrimSpace(p.required(nm.val, "name"))
	what := fmt.Sprintf("backend %q", b.Name)
	if strings.ContainsFunc(b.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		p.fail(nm.val, "%s: a name is one line of text", what)
	}
	if w, ok := m["when"]; ok && !isNull(w.val) {
		b.When = p.levelMap(w.val, what+" when", true)
	}
	c, ok := m["command"]
	if !ok {
		p.fail(n, "%s has no command (a list: the program and its arguments)", what)
	}
	cmd, nodes := p.stringList(c.val, what+" command", false)
	if len(cmd) == 0 || strings.TrimSpace(cmd[0]) == "" {
		p.fail(c.val, "%s: command needs at least the program", what)
	}
	for j, a := range cmd {
		p.template(uses, nodes[j], a, what+" command")
	}
	b.Command = cmd
	if e, ok := m["env"]; ok && !isNull(e.val) {
		_, entries := p.mapping(e.val, what+" env", nil)
		for _, kv := range entries {
			if kv.key.Value == "" || strings.ContainsAny(kv.key.Value, "=\x00") {
				p.fail(kv.key, "%s env: %q is not a variable name", what, kv.key.Value)
			}
			v := p.scalar(kv.val, what+" env "+kv.key.Value)
			p.template(uses, kv.val, v, what+" env")
			b.Env = append(b.Env, [2]string{kv.key.Value, v})
		}
	}
	if f, ok := m["files"]; ok && !isNull(f.val) {
		seen := map[string]bool{}
		for _, it := range p.sequence(f.val, what+" files") {
			fm, _ := p.mapping(it, what+" file", fileKeys)
			pn, ok := fm["path"]
			if !ok {
				p.fail(it, "%s: a file needs a path", what)
			}
			path := p.required(pn.val, what+" file path")
			if strings.HasPrefix(path, "/") {
				p.fail(pn.val, "%s: file path %q must be relative: files are written into the configuration's own directory", what, path)
			}
			for _, el := range strings.Split(path, "/") {
				if el == ".." {
					p.fail(pn.val, "%s: file path %q must stay inside the configuration's directory", what, path)
				}
			}
			if seen[path] {
				p.fail(pn.val, "%s: file %q is declared twice", what, path)
			}
			seen[path] = true
			p.template(uses, pn.val, path, what+" file path")
			var content string
			if cn, ok := fm["content"]; ok {
				content = p.scalar(cn.val, what+" file content")
				p.template(uses, cn.val, content, what+" file content")
			}
			b.Files = append(b.Files, File{Path: path, Content: content})
		}
	}
	u, ok := m["url"]
	if !ok {
		p.fail(n, "%s has no url (e.g. fcgi://{target}/ or http://{target}/)", what)
	}
	b.URL = strings.TrimSpace(p.required(u.val, what+" url"))
	scheme, _, found := strings.Cut(b.URL, "://")
	if !found || (scheme != "fcgi" && scheme != "http" && scheme != "https") {
		p.fail(u.val, "%s: url %q: want the scheme fcgi://, http:// or https://", what, b.URL)
	}
	p.template(uses, u.val, b.URL, what+" url")
	if v, ok := m["verify"]; ok && !isNull(v.val) {
		vm, _ := p.mapping(v.val, what+" verify", verifyKeys)
		if s, ok := vm["status"]; ok {
			b.Verify.Status = int(p.integer(s.val, what+" verify status", 100, 599))
		}
		if s, ok := vm["body"]; ok {
			b.Verify.Body = p.scalar(s.val, what+" verify body")
		}
	}
	if v, ok := m["exclusive"]; ok {
		b.Exclusive = p.boolean(v.val, what+" exclusive")
	}
	var portNode *yaml.Node
	if v, ok := m["port"]; ok {
		b.Port = int(p.integer(v.val, what+" port", 0, 65535))
		if b.Port > 0 {
			b.Exclusive = true
			portNode = v.key
		}
	}
	p.portKeys = append(p.portKeys, portNode)
	if v, ok := m["transport"]; ok {
		if _, factor := p.factors[FactorTransport]; factor {
			p.fail(v.key, "%s: transport is a factor of this study; a backend's transport: applies only without one", what)
		}
		b.Transport = p.scalar(v.val, what+" transport")
		if b.Transport != TransportTCP && b.Transport != TransportUnix {
			p.fail(v.val, "%s: transport %q is not tcp or unix", what, b.Transport)
		}
		if b.Transport == TransportUnix && portNode != nil {
			p.fail(portNode, "%s: a fixed port is a TCP port: it cannot go with transport unix", what)
		}
	}
	if v, ok := m["start_timeout"]; ok {
		b.StartTimeout = p.duration(v.val, what+" start_timeout", true)
	}
	if v, ok := m["stop"]; ok && !isNull(v.val) {
		sm, _ := p.mapping(v.val, what+" stop", stopKeys)
		if s, ok := sm["signal"]; ok {
			name := strings.ToUpper(strings.TrimSpace(p.scalar(s.val, what+" stop signal")))
			sig, known := signals[strings.TrimPrefix(name, "SIG")]
			if !known {
				p.fail(s.val, "%s: stop signal %q: want TERM, INT, QUIT, HUP or KILL", what, s.val.Value)
			}
			b.StopSignal = sig
		}
		if g, ok := sm["grace"]; ok {
			b.Grace = p.duration(g.val, what+" stop grace", false)
		}
	}
	if v, ok := m["insecure"]; ok {
		b.Insecure = p.boolean(v.val, what+" insecure")
		if b.Insecure && scheme != "https" {
			p.fail(v.key, "%s: insecure applies to https URLs only", what)
		}
	}
	if v, ok := m["document_root"]; ok {
		b.DocumentRoot = p.scalar(v.val, what+" document_root")
		if b.DocumentRoot != "" && scheme != "fcgi" {
			p.fail(v.key, "%s: document_root applies to fcgi URLs only", what)
		}
	}
	if v, ok := m["headers"]; ok && !isNull(v.val) {
		hs, nodes := p.stringList(v.val, what+" headers", true)
		for j, h := range hs {
			name, _, found := strings.Cut(h, ":")
			if !found || strings.TrimSpace(name) == "" || strings.ContainsAny(strings.TrimSpace(name), " \t") {
				p.fail(nodes[j], "%s: header %q: want \"Name: value\"", what, h)
			}
			p.template(uses, nodes[j], h, what+" header")
		}
		b.Headers = hs
	}
	if b.Port == 0 && !usesAny(uses, "listen", "addr", "port", "socket") {
		p.fail(c.key, "%s is never told its address: use {listen}, {addr}, {port} or {socket} in its command, env or files (or declare a fixed port:)", what)
	}
	if b.Port == 0 && !strings.Contains(b.URL, "{target}") && !strings.Contains(b.URL, "{addr}") && !strings.Contains(b.URL, "{port}") && !strings.Contains(b.URL, "{socket}") {
		p.fail(u.val, "%s: url %q does not go to the backend's address: use {target}, e.g. %s://{target}/ (or declare a fixed port:)", what, b.URL, scheme)
	}
	return b
}

// usesAny reports whether a backend uses one of the placeholders.
func usesAny(uses map[string]*use, names ...string) bool {
	for _, n := range names {
		if uses[n] != nil {
			return true
		}
	}
	return false
}

// template checks the placeholders of one field against the built-ins and
// the backend-side factors, and records their uses.
func (p *parser) template(uses map[string]*use, n *yaml.Node, tmpl, what string) {
	err := scan(tmpl, func(name string, off int) error {
		if f, ok := p.factors[name]; ok && f.Kind == KindClient {
			return fmt.Errorf("{%s} is a client-side factor: it starts no backend of its own, so a backend's fields cannot use it", name)
		}
		if _, ok := p.factors[name]; !ok && !contains(builtins, name) {
			return fmt.Errorf("unknown placeholder {%s} (placeholders: the backend-side factors %s; and %s; {{ and }} for braces)", name, p.factorNames(KindBackend), strings.Join(builtins, ", "))
		}
		if uses[name] == nil {
			line, col := p.placeholderPos(n, tmpl, off)
			uses[name] = &use{line, col}
		}
		return nil
	})
	if err != nil {
		var se *scanError
		if errors.As(err, &se) {
			line, col := p.placeholderPos(n, tmpl, se.off)
			p.failAt(line, col, "%s: %s", what, se.msg)
		}
		p.fail(n, "%s: %v", what, err)
	}
}

// placeholderPos finds the line and column of the text at byte offset off
// of a scalar's value in the file: the occurrence of the same text after
// the scalar's start, counted as in the value. When the text cannot be
// found (escapes, folding), it is the scalar's position.
func (p *parser) placeholderPos(n *yaml.Node, value string, off int) (int, int) {
	start := p.offset(n.Line, n.Column)
	if start < 0 || off < 0 || off > len(value) {
		return n.Line, max(n.Column, 1)
	}
	// The text from off to the end of its placeholder (or 1 byte).
	end := off + 1
	if j := strings.IndexByte(value[off:], '}'); j >= 0 && j < 200 {
		end = off + j + 1
	}
	needle := value[off:end]
	k := strings.Count(value[:off], needle)
	src := string(p.src[start:])
	pos := 0
	for i := 0; i <= k; i++ {
		j := strings.Index(src[pos:], needle)
		if j < 0 {
			return n.Line, max(n.Column, 1)
		}
		if i == k {
			return p.position(start + pos + j)
		}
		pos += j + len(needle)
	}
	return n.Line, max(n.Column, 1)
}

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

// checkConfigurations checks what needs the configurations: every one is
// served by a backend, every backend serves one, and a backend's fixed
// port, {port} and {socket} go with the transports it serves.
func (p *parser) checkConfigurations() {
	cs := p.s.Configurations()
	if len(cs) == 0 {
		p.fail(p.excludeKey, "exclude leaves no configuration to run")
	}
	served := make([]bool, len(p.s.Backends))
	for _, c := range cs {
		if c.Backend == nil {
			p.fail(p.backendsKey, "no backend serves the configuration %s: every backend's when excludes it", configLevels(p.s, c.Levels))
		}
		i := backendIndex(p.s, c.Backend)
		served[i] = true
		b, uses := c.Backend, p.uses[i]
		if c.Transport == TransportUnix {
			if b.Port > 0 {
				p.fail(p.portKeys[i], "backend %q serves %s over a Unix socket, but declares a fixed TCP port", b.Name, configLevels(p.s, c.Levels))
			}
			if u := uses["port"]; u != nil {
				p.failAt(u.line, u.col, "backend %q serves %s over a Unix socket, where {port} is empty: use {listen} or {addr}", b.Name, configLevels(p.s, c.Levels))
			}
		} else if u := uses["socket"]; u != nil {
			p.failAt(u.line, u.col, "backend %q serves %s over TCP, where {socket} is empty: use {listen} or {addr}", b.Name, configLevels(p.s, c.Levels))
		}
	}
	for i, ok := range served {
		if !ok {
			b := p.s.Backends[i]
			p.failAt(b.Line, b.Col, "backend %q serves no configuration: an earlier backend's when takes them all, or exclude leaves out its levels", b.Name)
		}
	}
	if len(p.s.Series(cs)) == 0 {
		p.fail(p.excludeKey, "exclude leaves no series to measure")
	}
	per := map[string]bool{}
	for _, sr := range p.s.Series(cs) {
		per[sr.Config.Name] = true
	}
	for _, c := range cs {
		if !per[c.Name] {
			p.fail(p.excludeKey, "exclude leaves the configuration %s nothing to measure", configLevels(p.s, c.Levels))
		}
	}
}

// configLevels names a configuration's levels for a message.
func configLevels(s *Study, levels map[string]string) string {
	if len(levels) == 0 {
		return "of the study"
	}
	return levelsName(s, levels, ", ")
}

// backendIndex is the index of b in s.Backends.
func backendIndex(s *Study, b *Backend) int {
	for i := range s.Backends {
		if &s.Backends[i] == b {
			return i
		}
	}
	return -1
}
