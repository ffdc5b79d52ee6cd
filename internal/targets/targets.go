// Package targets reads a targets file, the request mix of --targets, in
// vegeta's HTTP format, and turns the mix's weights into the deterministic
// schedule that the workers of a run walk by index. It also reads an
// nginx or Apache access log for --access-log (ReadLog): the distinct
// requests of its lines as targets weighted by their counts, and the
// log's own order of them as the schedule.
//
// The format: blocks separated by blank lines; each block starts with
// `METHOD URL`, then `Name: value` header lines, then an optional `@path`
// line naming a body file (relative to the targets file's directory; to
// the current directory for standard input). Lines starting with `#` are
// comments, except `# weight: N` inside a block, which gives the block a
// weight (a whole number from 1 to MaxWeight; 1 when absent): a block of
// weight 3 is sent three times as often as a block of weight 1. The URL
// may be a path only (`/b?x=1`), taken relative to the command line's
// target; the caller resolves it (Target.URL keeps it as written).
//
// What it does not do: fetch anything, follow includes, or read the
// JSON form of vegeta's targets. Errors name the file and the line
// (FILE:LINE: message).
package targets

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MaxWeight is the largest weight of one target.
const MaxWeight = 10000

// MaxTargets is the largest number of targets in a file.
const MaxTargets = 100000

// MaxSlots bounds the schedule's length (the weights' sum after dividing
// by their greatest common divisor), so that it stays a few MiB at most.
const MaxSlots = 1 << 20

// MaxBody bounds a body file, in bytes (64 MiB).
const MaxBody = 64 << 20

// Target is one block of a targets file.
type Target struct {
	// Method is the request method, as written (upper case by custom).
	Method string
	// URL is the URL as written: absolute, or a path (starting with /).
	URL string
	// Headers are the block's headers in order; Content-Type among them
	// sets the body's type.
	Headers [][2]string
	// Body is the content of the @path file; nil when there is none.
	Body []byte
	// BodyFile is the @path as written ("" when none).
	BodyFile string
	// Weight is the block's weight (1 when not given).
	Weight int
	// Line is the line of the block's first line, for messages.
	Line int
}

// Label is the target as the reports name it: "METHOD URL".
func (t Target) Label() string { return t.Method + " " + t.URL }

// Error is a bad targets file: the file, the line and what is wrong.
type Error struct {
	File string
	Line int
	Msg  string
}

// Error is "FILE:LINE: message" (or "FILE: message" without a line).
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ReadFile reads the targets file name; "-" reads stdin instead (named
// "stdin" in messages, its body files relative to the current directory).
func ReadFile(name string, stdin io.Reader) ([]Target, error) {
	if name == "-" {
		if stdin == nil {
			return nil, &Error{File: "stdin", Msg: "no standard input"}
		}
		return Parse(stdin, "stdin", ".")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, &Error{File: name, Msg: describe(err)}
	}
	defer f.Close()
	return Parse(f, name, filepath.Dir(name))
}

func describe(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return "cannot read: " + pe.Err.Error()
	}
	return err.Error()
}

// Parse reads targets from r; name is the file's name for messages, dir
// the directory body files are relative to.
func Parse(r io.Reader, name, dir string) ([]Target, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var out []Target
	var cur *Target
	weightSet := false
	bad := func(line int, format string, a ...any) error {
		return &Error{File: name, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			cur = nil
			continue
		case strings.HasPrefix(trimmed, "#"):
			key, val, ok := strings.Cut(strings.TrimSpace(trimmed[1:]), ":")
			if !ok || !strings.EqualFold(strings.TrimSpace(key), "weight") {
				continue // a comment
			}
			if cur == nil {
				return nil, bad(n, "a weight line must be inside a block, after its METHOD URL line")
			}
			if weightSet {
				return nil, bad(n, "a second weight for the target of line %d", cur.Line)
			}
			w, err := strconv.Atoi(strings.TrimSpace(val))
			if err != nil || w < 1 || w > MaxWeight {
				return nil, bad(n, "bad weight %q: want a whole number from 1 to %d", strings.TrimSpace(val), MaxWeight)
			}
			cur.Weight, weightSet = w, true
			continue
		}
		if cur == nil {
			method, url, ok := strings.Cut(trimmed, " ")
			url = strings.TrimSpace(url)
			if !ok || url == "" || strings.ContainsAny(url, " \t") {
				return nil, bad(n, "want METHOD URL, got %q", trimmed)
			}
			for _, c := range method {
				if c <= ' ' || c >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", c) {
					return nil, bad(n, "bad method %q", method)
				}
			}
			if !strings.HasPrefix(url, "/") && !strings.Contains(url, "://") {
				return nil, bad(n, "bad URL %q: want SCHEME://HOST/PATH or a path starting with /", url)
			}
			if len(out) == MaxTargets {
				return nil, bad(n, "more than %d targets", MaxTargets)
			}
			out = append(out, Target{Method: method, URL: url, Weight: 1, Line: n})
			cur, weightSet = &out[len(out)-1], false
			continue
		}
		if strings.HasPrefix(trimmed, "@") {
			if cur.BodyFile != "" {
				return nil, bad(n, "a second body file for the target of line %d", cur.Line)
			}
			p := strings.TrimSpace(trimmed[1:])
			if p == "" {
				return nil, bad(n, "an empty body file name after @")
			}
			full := p
			if !filepath.IsAbs(p) {
				full = filepath.Join(dir, p)
			}
			b, err := readBody(full)
			if err != nil {
				return nil, bad(n, "body file %s: %v", p, err)
			}
			cur.Body, cur.BodyFile = b, p
			continue
		}
		if cur.BodyFile != "" {
			return nil, bad(n, "a line after the body file: the @path line ends a block")
		}
		h, err := parseHeader(trimmed)
		if err != nil {
			return nil, bad(n, "%v", err)
		}
		cur.Headers = append(cur.Headers, h)
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{File: name, Msg: "cannot read: " + err.Error()}
	}
	if len(out) == 0 {
		return nil, &Error{File: name, Msg: "no targets (want blocks of METHOD URL, headers and an optional @body line)"}
	}
	if _, err := Schedule(Weights(out)); err != nil {
		return nil, &Error{File: name, Msg: err.Error()}
	}
	return out, nil
}

func readBody(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	n, err := io.Copy(&b, io.LimitReader(f, MaxBody+1))
	if err != nil {
		return nil, err
	}
	if n > MaxBody {
		return nil, fmt.Errorf("larger than %d MiB", MaxBody>>20)
	}
	return b.Bytes(), nil
}

// parseHeader reads a `Name: value` line.
func parseHeader(h string) ([2]string, error) {
	name, value, ok := strings.Cut(h, ":")
	if !ok {
		return [2]string{}, fmt.Errorf("bad header %q: want 'Name: value' (or @path for a body file)", h)
	}
	if name == "" || strings.ContainsFunc(name, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r)
	}) {
		return [2]string{}, fmt.Errorf("bad header %q: the name must be a non-empty token", h)
	}
	value = strings.TrimSpace(value)
	if strings.ContainsAny(value, "\r\n\x00") {
		return [2]string{}, fmt.Errorf("bad header %q: the value has a control byte", h)
	}
	return [2]string{name, value}, nil
}

// Weights returns the targets' weights, in order.
func Weights(ts []Target) []int {
	w := make([]int, len(ts))
	for i, t := range ts {
		w[i] = max(t.Weight, 1)
	}
	return w
}

// Schedule returns the order in which a run sends its targets: slot k of
// the run's request sequence sends target s[k % len(s)]. Each target i
// has weights[i]/g slots (g the weights' greatest common divisor), spread
// by smooth weighted round-robin, so that over any first m requests of a
// run target i has been sent within one of m·w_i/Σw times. It is computed
// once before the run; the workers only index it.
func Schedule(weights []int) ([]int32, error) {
	if len(weights) == 0 {
		return nil, errors.New("no targets")
	}
	g := 0
	for _, w := range weights {
		if w < 1 {
			return nil, fmt.Errorf("weight %d: want 1 or more", w)
		}
		g = gcd(g, w)
	}
	total := 0
	red := make([]int, len(weights))
	for i, w := range weights {
		red[i] = w / g
		total += red[i]
		if total > MaxSlots {
			return nil, fmt.Errorf("the weights add up to more than %d slots once reduced: use smaller weights", MaxSlots)
		}
	}
	if int64(total)*int64(len(weights)) > 1<<31 {
		return nil, fmt.Errorf("%d targets with weights adding up to %d: too many to schedule; use smaller weights", len(weights), total)
	}
	s := make([]int32, total)
	cur := make([]int, len(red))
	for k := range s {
		best := 0
		for i, w := range red {
			cur[i] += w
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		s[k] = int32(best)
	}
	return s, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
