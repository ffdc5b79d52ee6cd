package studyfile

import (
	"fmt"
	"strconv"
	"strings"
)

// Configuration is one combination of backend-side factor levels: one
// backend process.
type Configuration struct {
	// Name is stable and readable: the factor=level pairs in factor order
	// joined by ", " ("transport=unix, workers=4"); the backend's name
	// when the study has no backend-side factor.
	Name string
	// Levels maps each backend-side factor to its level.
	Levels map[string]string
	// Backend is the first backend whose When matches, a pointer into
	// the Study's Backends (nil only in a Study that Parse did not check).
	Backend *Backend
	// Transport is TransportTCP or TransportUnix: the transport factor's
	// level, or else the backend's Transport.
	Transport string
}

// Series is one measured line: a configuration with a level of every
// client-side factor.
type Series struct {
	// Config points into the slice given to Series.
	Config *Configuration
	// Levels maps every factor, backend- and client-side, to its level.
	Levels map[string]string
	// Label is every factor's level in factor order, factor=level joined
	// by spaces ("transport=unix keepalive=on workers=4").
	Label string
}

// levelsName joins a combination's factor=level pairs in factor order. A
// level with a space, a comma, '=' or '"' is quoted, so that two
// combinations never share a name.
func levelsName(s *Study, levels map[string]string, sep string) string {
	var parts []string
	for _, f := range s.Factors {
		if v, ok := levels[f.Name]; ok {
			if strings.ContainsAny(v, " ,=\"") {
				v = strconv.Quote(v)
			}
			parts = append(parts, f.Name+"="+v)
		}
	}
	return strings.Join(parts, sep)
}

// excluded reports whether a combination matches one of the exclusions.
// An exclusion naming a factor the combination lacks does not match.
func (s *Study) excluded(levels map[string]string) bool {
	for _, ex := range s.Exclude {
		match := true
		for k, v := range ex {
			if levels[k] != v {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// combinations calls fn with every combination of the levels of the
// factors of the kind, the first factor changing slowest.
func (s *Study) combinations(kind string, fn func(map[string]string)) {
	var fs []*Factor
	for i := range s.Factors {
		if s.Factors[i].Kind == kind {
			fs = append(fs, &s.Factors[i])
		}
	}
	idx := make([]int, len(fs))
	for {
		m := make(map[string]string, len(fs))
		for i, f := range fs {
			m[f.Name] = f.Levels[idx[i]]
		}
		fn(m)
		i := len(fs) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(fs[i].Levels) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// serves reports whether b's When matches the levels.
func (b *Backend) serves(levels map[string]string) bool {
	for k, v := range b.When {
		if levels[k] != v {
			return false
		}
	}
	return true
}

// Configurations returns every combination of backend-side factor levels
// that the exclusions leave, in factor order (the first factor changing
// slowest), each with the first backend that serves it. Exclusions that
// name a client-side factor leave configurations in (Series takes them
// out).
func (s *Study) Configurations() []Configuration {
	var out []Configuration
	s.combinations(KindBackend, func(levels map[string]string) {
		if s.excluded(levels) {
			return
		}
		c := Configuration{Levels: levels, Name: levelsName(s, levels, ", ")}
		for i := range s.Backends {
			if s.Backends[i].serves(levels) {
				c.Backend = &s.Backends[i]
				break
			}
		}
		c.Transport = TransportTCP
		if t, ok := levels[FactorTransport]; ok {
			c.Transport = t
		} else if c.Backend != nil && c.Backend.Transport != "" {
			c.Transport = c.Backend.Transport
		}
		if c.Name == "" && c.Backend != nil {
			c.Name = c.Backend.Name
		}
		out = append(out, c)
	})
	return out
}

// Series returns the series of the configurations cs: each configuration
// with every combination of client-side factor levels (configuration by
// configuration, the first client-side factor changing slowest), those an
// exclusion matches left out. Config points into cs.
func (s *Study) Series(cs []Configuration) []Series {
	var out []Series
	for i := range cs {
		c := &cs[i]
		s.combinations(KindClient, func(client map[string]string) {
			levels := make(map[string]string, len(c.Levels)+len(client))
			for k, v := range c.Levels {
				levels[k] = v
			}
			for k, v := range client {
				levels[k] = v
			}
			if s.excluded(levels) {
				return
			}
			out = append(out, Series{Config: c, Levels: levels, Label: levelsName(s, levels, " ")})
		})
	}
	return out
}

// Expand returns a copy of the backend with every template substituted
// from vars (a configuration's Vars): the command, the environment's
// values, the files' paths and contents, the URL and the headers. A file
// path that comes out absolute or with a ".." element is an error: files
// stay in the configuration's directory.
func (b *Backend) Expand(vars map[string]string) (Backend, error) {
	out := *b
	var err error
	x := func(tmpl string) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = Expand(tmpl, vars)
		return s
	}
	out.Command = make([]string, len(b.Command))
	for i, a := range b.Command {
		out.Command[i] = x(a)
	}
	out.Env = make([][2]string, len(b.Env))
	for i, e := range b.Env {
		out.Env[i] = [2]string{e[0], x(e[1])}
	}
	out.Files = make([]File, len(b.Files))
	for i, f := range b.Files {
		out.Files[i] = File{Path: x(f.Path), Content: x(f.Content)}
		if err == nil && !localPath(out.Files[i].Path) {
			err = fmt.Errorf("file %q: the path must stay inside the configuration's directory", out.Files[i].Path)
		}
	}
	out.URL = x(b.URL)
	out.DocumentRoot = x(b.DocumentRoot)
	out.Headers = make([]string, len(b.Headers))
	for i, h := range b.Headers {
		out.Headers[i] = x(h)
	}
	if err != nil {
		return Backend{}, fmt.Errorf("backend %q: %w", b.Name, err)
	}
	return out, nil
}

// localPath reports whether a file path is relative and has no ".."
// element.
func localPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") {
		return false
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return false
		}
	}
	return true
}
