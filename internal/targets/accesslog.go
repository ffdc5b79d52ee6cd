package targets

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Combined is the combined log format (nginx's default, Apache's
// "combined") as an nginx log_format string.
const Combined = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`

// Common is the common log format (Apache's "common", CLF) as an nginx
// log_format string. Since its last field takes the rest of the line, it
// reads combined lines too.
const Common = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent`

// MaxLogTargets is the largest number of distinct targets (method and
// path with its query) replayed from an access log: the most frequent
// ones are kept, and the lines of the others are skipped.
const MaxLogTargets = 1000

// MaxLogLines is the largest number of log lines replayed, in bytes of
// the schedule 4 per line (16 MiB); later lines are not read.
const MaxLogLines = 1 << 22

// DefaultMethods are the methods replayed from an access log unless told
// otherwise: requests that change nothing.
var DefaultMethods = []string{"GET", "HEAD"}

// Log is an access log read for replay: its distinct requests as
// targets (each weighted by its count), the order of its usable lines,
// and the counts of the lines it did not use.
type Log struct {
	// Targets are the distinct "METHOD PATH?QUERY" of the usable lines,
	// in the order of their first line; Weight is the count.
	Targets []Target
	// Order has one entry per usable line, in the log's order: the index
	// of its target. It is the schedule a replay walks.
	Order []int32
	// Lines counts the non-blank lines read; Replayed those in Order.
	Lines, Replayed int64
	// Skipped counts well-formed lines not replayed: a method not
	// replayed, no request ("-"), a request target that is not a path, or
	// a target beyond the MaxLogTargets most frequent.
	Skipped int64
	// Malformed counts lines that do not match the format or whose
	// request line is not "METHOD TARGET [PROTOCOL]".
	Malformed int64
	// FirstBad is the line number of the first skipped or malformed
	// line (0 when none), and FirstBadWhy what was wrong with it.
	FirstBad    int
	FirstBadWhy string
	// Truncated reports that the log had more than MaxLogLines usable
	// lines: the rest was not read.
	Truncated bool
}

// logFormat is a compiled nginx log_format: lits[0], then vars[0],
// lits[1], vars[1], ... and lits[len(vars)].
type logFormat struct {
	lits []string
	vars []string
}

// FormatString returns the log_format string of name: "combined" and
// "common" are the standard formats, anything else is taken as a
// log_format string itself.
func FormatString(name string) string {
	switch name {
	case "", "combined":
		return Combined
	case "common":
		return Common
	}
	return name
}

// compileFormat reads an nginx log_format string: $name and ${name}
// variables among literal text. Any variable is matched as opaque text;
// $request (or $request_method with $request_uri) must be present, and
// two variables need literal text between them.
func compileFormat(s string) (*logFormat, error) {
	f := &logFormat{}
	var lit strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' {
			lit.WriteByte(s[i])
			i++
			continue
		}
		j, name := i+1, ""
		if j < len(s) && s[j] == '{' {
			end := strings.IndexByte(s[j:], '}')
			if end < 0 {
				return nil, fmt.Errorf("log format: an unclosed ${ at byte %d", i+1)
			}
			name, j = s[j+1:j+end], j+end+1
		} else {
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			name = s[i+1 : j]
		}
		if name == "" {
			return nil, fmt.Errorf("log format: a $ without a variable name at byte %d", i+1)
		}
		if len(f.vars) > 0 && lit.Len() == 0 {
			return nil, fmt.Errorf("log format: $%s follows $%s with nothing between them: cannot tell where one ends", name, f.vars[len(f.vars)-1])
		}
		f.lits = append(f.lits, lit.String())
		lit.Reset()
		f.vars = append(f.vars, name)
		i = j
	}
	f.lits = append(f.lits, lit.String())
	has := func(v string) bool {
		for _, x := range f.vars {
			if x == v {
				return true
			}
		}
		return false
	}
	if !has("request") && !(has("request_method") && has("request_uri")) {
		return nil, fmt.Errorf("log format %q: want $request (or $request_method and $request_uri) to know what was requested", s)
	}
	return f, nil
}

// match splits line into the format's variables; false when it does not
// match. A variable ends at the first following occurrence of the next
// literal text not escaped by a backslash; the last ends where the line's
// final literal text starts.
func (f *logFormat) match(line string, vals []string) bool {
	if !strings.HasPrefix(line, f.lits[0]) {
		return false
	}
	pos := len(f.lits[0])
	for i := range f.vars {
		next := f.lits[i+1]
		if i == len(f.vars)-1 {
			if !strings.HasSuffix(line[pos:], next) {
				return false
			}
			vals[i] = line[pos : len(line)-len(next)]
			return true
		}
		k := pos
		for {
			idx := strings.Index(line[k:], next)
			if idx < 0 {
				return false
			}
			k += idx
			if k > 0 && line[k-1] == '\\' && next[0] == '"' {
				k++
				continue
			}
			break
		}
		vals[i] = line[pos:k]
		pos = k + len(next)
	}
	return pos == len(line)
}

// ReadLog reads the access log name ("-" reads stdin, named "stdin" in
// messages) in format (FormatString; "" reads combined and common lines
// alike) for replay, keeping the lines whose
// method is among methods (DefaultMethods when empty). A log with no
// usable line is an *Error naming its first bad line.
func ReadLog(name string, stdin io.Reader, format string, methods []string) (*Log, error) {
	var r io.Reader
	if name == "-" {
		if stdin == nil {
			return nil, &Error{File: "stdin", Msg: "no standard input"}
		}
		r, name = stdin, "stdin"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, &Error{File: name, Msg: describe(err)}
		}
		defer f.Close()
		r = f
	}
	return ParseLog(r, name, format, methods)
}

// ParseLog is ReadLog on r, name naming it in messages.
func ParseLog(r io.Reader, name, format string, methods []string) (*Log, error) {
	f, err := compileFormat(FormatString(format))
	if err != nil {
		return nil, &Error{File: name, Msg: err.Error()}
	}
	// With no format named, a line that is not combined may be common.
	var alt *logFormat
	if format == "" {
		alt, _ = compileFormat(Common)
	}
	if len(methods) == 0 {
		methods = DefaultMethods
	}
	iReq, iMethod, iURI := -1, -1, -1
	for i, v := range f.vars {
		switch v {
		case "request":
			iReq = i
		case "request_method":
			iMethod = i
		case "request_uri":
			iURI = i
		}
	}
	lg := &Log{}
	bad := func(n int, malformed bool, why string) {
		if malformed {
			lg.Malformed++
		} else {
			lg.Skipped++
		}
		if lg.FirstBad == 0 {
			lg.FirstBad, lg.FirstBadWhy = n, why
		}
	}
	index := map[string]int32{}
	var keys []string
	var counts []int64
	var firstLine []int
	vals := make([]string, len(f.vars))
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		lg.Lines++
		if !f.match(line, vals) && (alt == nil || !alt.match(line, vals)) {
			bad(n, true, "does not match the log format")
			continue
		}
		var method, target string
		if iReq >= 0 {
			req := vals[iReq]
			if req == "-" || req == "" {
				bad(n, false, "no request line (\"-\")")
				continue
			}
			parts := strings.Split(req, " ")
			if len(parts) < 2 || len(parts) > 3 || len(parts) == 3 && !strings.HasPrefix(parts[2], "HTTP/") {
				bad(n, true, fmt.Sprintf("bad request line %q: want METHOD TARGET PROTOCOL", clip(req)))
				continue
			}
			method, target = parts[0], parts[1]
		} else {
			method, target = vals[iMethod], vals[iURI]
		}
		if !isToken(method) {
			bad(n, true, fmt.Sprintf("bad method %q", clip(method)))
			continue
		}
		if !contains(methods, method) {
			bad(n, false, fmt.Sprintf("method %s not replayed (--replay-methods)", method))
			continue
		}
		if !strings.HasPrefix(target, "/") || strings.ContainsFunc(target, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '#' }) {
			bad(n, false, fmt.Sprintf("request target %q is not a path", clip(target)))
			continue
		}
		if lg.Replayed == MaxLogLines {
			lg.Truncated = true
			break
		}
		key := method + " " + target
		i, ok := index[key]
		if !ok {
			i = int32(len(keys))
			index[key] = i
			keys, counts, firstLine = append(keys, key), append(counts, 0), append(firstLine, n)
		}
		counts[i]++
		lg.Order = append(lg.Order, i)
		lg.Replayed++
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{File: name, Line: n + 1, Msg: "cannot read: " + err.Error()}
	}
	if len(keys) > MaxLogTargets {
		// Keep the most frequent targets (the earliest first among equal
		// counts); the lines of the others are skipped.
		rank := make([]int32, len(keys))
		for i := range rank {
			rank[i] = int32(i)
		}
		sort.SliceStable(rank, func(a, b int) bool { return counts[rank[a]] > counts[rank[b]] })
		keep := make([]bool, len(keys))
		for _, i := range rank[:MaxLogTargets] {
			keep[i] = true
		}
		remap := make([]int32, len(keys))
		var nk []string
		var nc []int64
		var nl []int
		for i := range keys {
			remap[i] = -1
			if keep[i] {
				remap[i] = int32(len(nk))
				nk, nc, nl = append(nk, keys[i]), append(nc, counts[i]), append(nl, firstLine[i])
			}
		}
		order := lg.Order[:0]
		for _, i := range lg.Order {
			if remap[i] >= 0 {
				order = append(order, remap[i])
			} else {
				lg.Skipped++
				lg.Replayed--
			}
		}
		lg.Order, keys, counts, firstLine = order, nk, nc, nl
	}
	if len(keys) == 0 {
		msg := "no request to replay"
		if lg.FirstBad > 0 {
			return nil, &Error{File: name, Line: lg.FirstBad, Msg: fmt.Sprintf("%s: %s (%d lines: %d malformed, %d skipped; methods replayed: %s)",
				msg, lg.FirstBadWhy, lg.Lines, lg.Malformed, lg.Skipped, strings.Join(methods, ","))}
		}
		return nil, &Error{File: name, Msg: msg + ": the log is empty"}
	}
	lg.Targets = make([]Target, len(keys))
	for i, k := range keys {
		m, u, _ := strings.Cut(k, " ")
		lg.Targets[i] = Target{Method: m, URL: u, Weight: int(min(counts[i], int64(1<<31-1))), Line: firstLine[i]}
	}
	return lg, nil
}

// ParseMethods reads --replay-methods: a comma-separated list of methods
// (upper-cased).
func ParseMethods(s string) ([]string, error) {
	var out []string
	for _, m := range strings.Split(s, ",") {
		m = strings.ToUpper(strings.TrimSpace(m))
		if !isToken(m) {
			return nil, fmt.Errorf("bad method %q in %q: want a comma-separated list such as GET,HEAD,POST", m, s)
		}
		if !contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", c) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// clip shortens s for a message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
