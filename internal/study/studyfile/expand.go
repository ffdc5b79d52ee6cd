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

// scan walks the placeholders of tmpl, calling visit with each name and
// the byte offset of its opening brace. "{{" and "}}" are literal braces.
// It returns the first problem as a *scanError: a lone brace, a brace
// that does not close, or an error of visit.
func scan(tmpl string, visit func(name string, off int) error) error {
	for i := 0; i < len(tmpl); i++ {
		switch tmpl[i] {
		case '{':
			if i+1 < len(tmpl) && tmpl[i+1] == '{' {
				i++
				continue
			}
			j := strings.IndexByte(tmpl[i+1:], '}')
			if j < 0 {
				return &scanError{i, "a { that does not close (write {{ for a literal brace)"}
			}
			name := tmpl[i+1 : i+1+j]
			if !validName.MatchString(name) {
				return &scanError{i, "a { that opens no placeholder (write {{ and }} for literal braces)"}
			}
			if err := visit(name, i); err != nil {
				return &scanError{i, err.Error()}
			}
			i += j + 1
		case '}':
			if i+1 < len(tmpl) && tmpl[i+1] == '}' {
				i++
				continue
			}
			return &scanError{i, "a lone } (write }} for a literal brace)"}
		}
	}
	return nil
}

// Placeholders returns the names of the placeholders of tmpl in order of
// first use, or the template's first problem.
func Placeholders(tmpl string) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	err := scan(tmpl, func(name string, _ int) error {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
		return nil
	})
	return names, err
}

// Expand substitutes the placeholders {name} of tmpl with vars[name];
// "{{" and "}}" are literal braces. A placeholder missing from vars, a lone
// brace or one that does not close is an error.
func Expand(tmpl string, vars map[string]string) (string, error) {
	var b strings.Builder
	last := 0
	err := scan(tmpl, func(name string, off int) error {
		v, ok := vars[name]
		if !ok {
			return fmt.Errorf("unknown placeholder {%s}", name)
		}
		b.WriteString(unescape(tmpl[last:off]))
		b.WriteString(v)
		last = off + len(name) + 2
		return nil
	})
	if err != nil {
		return "", err
	}
	b.WriteString(unescape(tmpl[last:]))
	return b.String(), nil
}

// unescape turns the doubled braces of a stretch without placeholders
// into single ones.
func unescape(s string) string {
	if !strings.ContainsAny(s, "{}") {
		return s
	}
	return strings.NewReplacer("{{", "{", "}}", "}").Replace(s)
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
