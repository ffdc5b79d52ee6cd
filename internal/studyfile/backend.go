package studyfile

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"gopkg.in/yaml.v3"
)

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
		p.template(uses, v.val, b.DocumentRoot, what+" document_root")
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
	if v, ok := m["cpus"]; ok && !isNull(v.val) {
		b.CPUs = p.cpus(v.val, what+" cpus")
	}
	if b.Port == 0 && !usesAny(uses, "listen", "addr", "port", "socket") {
		p.fail(c.key, "%s is never told its address: use {listen}, {addr}, {port} or {socket} in its command, env or files (or declare a fixed port:)", what)
	}
	if names := Placeholders(b.URL); b.Port == 0 && !slices.ContainsFunc(names, func(n string) bool { return n == "target" || n == "addr" || n == "port" || n == "socket" }) {
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
			known := append(p.factorNamesOf(KindBackend), builtins...)
			return fmt.Errorf("unknown placeholder {%s}%s (placeholders: the backend-side factors %s; and %s; write {{%s}} for the text {%s})", name, suggest(name, known), p.factorNames(KindBackend), strings.Join(builtins, ", "), name, name)
		}
		if uses[name] == nil {
			line, col := p.placeholderPos(n, tmpl, off)
			uses[name] = &use{line, col}
		}
		return nil
	}, func(string) {})
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
