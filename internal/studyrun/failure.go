package studyrun

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// A failure's line says why in one line: what happened, the last lines
// of the backend's output, the last lines of its log files, and where its
// directory is kept. These bound it.
const (
	// tailLines is how many last lines of the output, and of each log,
	// a failure quotes: 5.
	tailLines = 5
	// lineMax is the longest a quoted line is kept: 240 bytes, then "…".
	lineMax = 240
	// maxLogs is how many log files a failure quotes: 3.
	maxLogs = 3
	// logTailBytes is how much of a log's end is read: 64 KiB.
	logTailBytes = 64 << 10
	// logDepth is how deep under a configuration's directory its *.log
	// files are looked for: 2 levels (c1/x.log, c1/logs/x.log).
	logDepth = 2
)

// why is c's failure line: head, then the last lines of its output
// (out, joined by " | "), then the clauses of after, then the last lines
// of each log file of c's (logFiles) not quoted already, then where its
// directory is kept. c's directory is kept from now on (cleanup).
func (r *runner) why(c *config, head string, out []string, after ...string) string {
	var b strings.Builder
	b.WriteString(head)
	quoted := map[string]bool{}
	if len(out) > 0 {
		b.WriteString(": ")
		b.WriteString(joinLines(out, quoted))
	}
	for _, a := range after {
		b.WriteString("; " + a)
	}
	for _, p := range logFiles(c) {
		lines := logTail(p, tailLines)
		if len(lines) == 0 {
			continue
		}
		name := p
		if rel, err := filepath.Rel(c.dir, p); err == nil && !strings.HasPrefix(rel, "..") {
			name = rel
		}
		var fresh []string
		for _, l := range lines {
			if !quoted[trimLine(l)] {
				fresh = append(fresh, l)
			}
		}
		if len(fresh) == 0 {
			b.WriteString("; " + name + " ends as the output does")
			continue
		}
		b.WriteString("; " + name + " ends: " + joinLines(fresh, quoted))
	}
	c.res.Dir = c.dir
	b.WriteString("; its files and logs are kept in " + c.dir)
	return b.String()
}

// joinLines joins the lines, each trimmed (trimLine), with " | ", and
// records them in quoted.
func joinLines(lines []string, quoted map[string]bool) string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		l = trimLine(l)
		quoted[l] = true
		out = append(out, l)
	}
	return strings.Join(out, " | ")
}

// trimLine trims l's spaces and cuts it at lineMax bytes (on a rune's
// boundary), with "…".
func trimLine(l string) string {
	l = strings.TrimSpace(l)
	if len(l) <= lineMax {
		return l
	}
	cut := lineMax
	for cut > 0 && !utf8.RuneStart(l[cut]) {
		cut--
	}
	return l[:cut] + "…"
}

// logFiles returns the log files of c that exist (regular files, not
// empty), at most maxLogs: first the paths ending in ".log" that c's
// command, environment or files name (a word of the file's text, such as
// php-fpm's `error_log = {dir}/php-fpm.log`, or a file's own path), a
// relative one taken under c's directory; then the files named *.log
// under c's directory (2 levels deep), which a backend writes by its own
// default.
func logFiles(c *config) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if len(out) >= maxLogs || !strings.HasSuffix(p, ".log") {
			return
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(c.dir, p)
		}
		p = filepath.Clean(p)
		if seen[p] {
			return
		}
		seen[p] = true
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			out = append(out, p)
		}
	}
	words := func(s string) {
		for _, w := range strings.FieldsFunc(s, isWordSep) {
			add(w)
		}
	}
	for _, a := range c.argv {
		words(a)
	}
	for _, kv := range c.env {
		words(kv)
	}
	for _, f := range c.files {
		add(f.path)
		words(f.content)
	}
	filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if rel, _ := filepath.Rel(c.dir, p); rel != "." && strings.Count(rel, string(filepath.Separator)) >= logDepth-1 {
				return filepath.SkipDir
			}
			return nil
		}
		add(p)
		return nil
	})
	return out
}

// isWordSep separates the words of a file's text in which logFiles looks
// for paths: spaces, quotes, and the signs around a value in the usual
// configuration formats (key = value, key: value, key=value;).
func isWordSep(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', '=', ',', ';', '(', ')', '[', ']', '{', '}', '<', '>':
		return true
	}
	return false
}

// logTail returns the last n non-blank lines of the file at p (of its last
// 64 KiB).
func logTail(p string, n int) []string {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	off := max(fi.Size()-logTailBytes, 0)
	b, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return nil
	}
	if off > 0 { // the first line is cut
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
