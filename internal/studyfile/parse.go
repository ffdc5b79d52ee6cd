package studyfile

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/backbench/backbench/internal/study"
	"io"
	"regexp"
	"strconv"
	"strings"
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

// The keys of each part of the file.
var (
	topKeys     = []string{"question", "factors", "exclude", "backends", "measure"}
	factorKeys  = []string{"levels", "baseline", "setting"}
	backendKeys = []string{"name", "when", "command", "env", "files", "url", "verify", "exclusive", "port", "transport", "start_timeout", "stop", "insecure", "document_root", "headers", "cpus"}
	fileKeys    = []string{"path", "content"}
	verifyKeys  = []string{"status", "body"}
	stopKeys    = []string{"signal", "grace"}
	measureKeys = []string{"kind", "concurrency", "requests", "duration", "repeat", "warmup", "noise", "timeout", "slo", "confirm", "memory", "client_cpus", "pin", "until", "budget", "max_repeat", "targets", "access_log", "log_format", "replay_methods"}
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
	p.s = &Study{Declaration: study.Declaration{File: p.file}}
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
	p.pinAuto()
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
			if st, ok := m["setting"]; ok {
				fac.Setting = strings.TrimSpace(p.required(st.val, what+" setting"))
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
	names := p.factorNamesOf(kind)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// factorNamesOf returns the names of the factors of kind (all, when "").
func (p *parser) factorNamesOf(kind string) []string {
	var names []string
	for _, f := range p.s.Factors {
		if kind == "" || f.Kind == kind {
			names = append(names, f.Name)
		}
	}
	return names
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
