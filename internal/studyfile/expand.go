package studyfile

import (
	"fmt"
	"net"
	"strings"
)

// scanError is a problem of a template at a byte offset.
type scanError struct {
	off int
	msg string
}

func (e *scanError) Error() string { return e.msg }

// A template's braces: {NAME}, NAME a factor's or a built-in's name (a
// letter or _, then letters, digits, _ or -), is a placeholder; {{NAME}} is
// the literal text {NAME}; every other brace is literal as it stands, so
// that PHP, nginx, JSON and shell files paste in unchanged: a brace around
// anything that is not a name ({ a }, {"a": 1}, {}), a lone brace, doubled
// braces around anything but a name, and ${NAME} (a shell's or PHP's own
// variable).

// placeholderAt reports whether tmpl[i] (a '{') opens a placeholder, and
// its name's end (the index of its closing brace).
func placeholderAt(tmpl string, i int) (end int, ok bool) {
	if i > 0 && tmpl[i-1] == '$' {
		return 0, false
	}
	j := strings.IndexByte(tmpl[i+1:], '}')
	if j < 1 || j > 64 || !validName.MatchString(tmpl[i+1:i+1+j]) {
		return 0, false
	}
	return i + 1 + j, true
}

// escapedAt reports whether tmpl[i:] begins with {{NAME}}, the escape of
// a literal {NAME}, and the index just past it.
func escapedAt(tmpl string, i int) (next int, ok bool) {
	if !strings.HasPrefix(tmpl[i:], "{{") {
		return 0, false
	}
	end, ok := placeholderAt(tmpl, i+1)
	if !ok || !strings.HasPrefix(tmpl[end:], "}}") {
		return 0, false
	}
	return end + 2, true
}

// scan walks tmpl, calling visit with the name and the byte offset of the
// opening brace of each placeholder, and literal with each stretch of text
// between them as it is to be written ({{NAME}} as {NAME}). It returns the
// first error of visit as a *scanError at the placeholder's offset.
func scan(tmpl string, visit func(name string, off int) error, literal func(string)) error {
	last := 0
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '{' {
			continue
		}
		if next, ok := escapedAt(tmpl, i); ok {
			literal(tmpl[last:i])
			literal(tmpl[i+1 : next-1])
			last, i = next, next-1
			continue
		}
		end, ok := placeholderAt(tmpl, i)
		if !ok {
			continue
		}
		literal(tmpl[last:i])
		if err := visit(tmpl[i+1:end], i); err != nil {
			return &scanError{i, err.Error()}
		}
		last, i = end+1, end
	}
	literal(tmpl[last:])
	return nil
}

// Placeholders returns the names of the placeholders of tmpl in order of
// first use.
func Placeholders(tmpl string) []string {
	var names []string
	seen := map[string]bool{}
	scan(tmpl, func(name string, _ int) error {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
		return nil
	}, func(string) {})
	return names
}

// Expand substitutes the placeholders {NAME} of tmpl with vars[NAME];
// {{NAME}} is written {NAME}, and every other brace as it stands. A
// placeholder missing from vars is an error.
func Expand(tmpl string, vars map[string]string) (string, error) {
	var b strings.Builder
	b.Grow(len(tmpl))
	err := scan(tmpl, func(name string, off int) error {
		v, ok := vars[name]
		if !ok {
			return fmt.Errorf("unknown placeholder {%s}", name)
		}
		b.WriteString(v)
		return nil
	}, func(s string) { b.WriteString(s) })
	if err != nil {
		return "", err
	}
	return b.String(), nil
}

// Vars returns the placeholder values of the configuration listening on
// network ("tcp" or "unix") at addr ("127.0.0.1:PORT" or a socket's path),
// with dir its own directory: its factor levels and the built-ins listen
// (serve-style "tcp:127.0.0.1:PORT" or "unix:/path"), addr
// ("127.0.0.1:PORT" or "/path"), target (the host part of a backbench URL:
// "127.0.0.1:PORT" or "unix:/path:"), port ("" over a socket), socket (""
// over TCP), dir and name.
func (c *Configuration) Vars(network, addr, dir string) map[string]string {
	vars := make(map[string]string, len(c.Levels)+len(builtins))
	for k, v := range c.Levels {
		vars[k] = v
	}
	vars["addr"], vars["dir"], vars["name"] = addr, dir, c.Name
	if network == TransportUnix {
		vars["listen"] = "unix:" + addr
		vars["target"] = "unix:" + addr + ":"
		vars["port"] = ""
		vars["socket"] = addr
	} else {
		vars["listen"] = "tcp:" + addr
		vars["target"] = addr
		vars["port"] = ""
		if _, port, err := net.SplitHostPort(addr); err == nil {
			vars["port"] = port
		}
		vars["socket"] = ""
	}
	return vars
}
