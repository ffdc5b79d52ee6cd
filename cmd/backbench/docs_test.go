package main

// Tests of the documentation: README.md (the front page) and the manual in
// docs/. Every relative link and #anchor resolves, and every flag of every
// command is on that command's page.

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/pflag"
)

// docsRoot is the repository's top directory, seen from this package.
const docsRoot = "../.."

// docFiles returns README.md and every page of docs/, as paths from this
// package's directory.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in docs/: %v", err)
	}
	return append([]string{filepath.Join(docsRoot, "README.md")}, pages...)
}

// readDoc returns a file's text.
func readDocFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// proseLines returns the lines of a Markdown text that are outside fenced
// code blocks (a link or a heading in a code block is not one).
func docProseLines(text string) []string {
	var out []string
	fence := ""
	for _, l := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(l)
		if fence == "" && (strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~")) {
			fence = trim[:3]
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trim, fence) {
				fence = ""
			}
			continue
		}
		out = append(out, l)
	}
	return out
}

var (
	headingRe  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	// linkRe finds [text](target) and ![alt](target), target without spaces
	// (an optional "title" after it is allowed).
	linkRe = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
)

// githubSlug is the anchor GitHub gives a heading: the rendered text in
// lower case, every character that is not a letter, a digit, a space, '-'
// or '_' dropped, each space made a '-'.
func githubSlug(heading string) string {
	text := inlineLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a Markdown text's headings, with GitHub's
// suffixes for repeated ones (-1, -2 ...).
func docAnchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range docProseLines(text) {
		m := headingRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := githubSlug(m[2])
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// links returns the link targets of a Markdown text, outside code blocks
// and code spans.
func docLinkTargets(text string) []string {
	var out []string
	for _, l := range docProseLines(text) {
		l = codeSpan.ReplaceAllString(l, "")
		for _, m := range linkRe.FindAllStringSubmatch(l, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

func TestGithubSlug(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"bench", "bench"},
		{"Open model and coordinated omission (`--rate`)", "open-model-and-coordinated-omission---rate"},
		{"Backend memory: PSS, RSS, USS", "backend-memory-pss-rss-uss"},
		{"6. Is a Unix socket really faster than TCP?", "6-is-a-unix-socket-really-faster-than-tcp"},
		{"The run record (`record`, schema 1)", "the-run-record-record-schema-1"},
		{"How `make bench` runs", "how-make-bench-runs"},
		{"A [link](x.md) in it", "a-link-in-it"},
	} {
		if got := githubSlug(c.in); got != c.want {
			t.Errorf("githubSlug(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	a := docAnchors("# x\n## x\n```\n# not a heading\n```\n## x\n")
	for _, want := range []string{"x", "x-1", "x-2"} {
		if !a[want] {
			t.Errorf("anchors: %q missing from %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a line in a code block counted as a heading")
	}
}

// TestDocLinks checks that every relative link of README.md and docs/*.md
// names a file of the repository, and every #anchor a heading of its page.
func TestDocLinks(t *testing.T) {
	onceAcrossEngines(t)
	root, err := filepath.Abs(docsRoot)
	if err != nil {
		t.Fatal(err)
	}
	anchorsOf := map[string]map[string]bool{}
	pageAnchors := func(path string) map[string]bool {
		if a, ok := anchorsOf[path]; ok {
			return a
		}
		anchorsOf[path] = docAnchors(readDocFile(t, path))
		return anchorsOf[path]
	}
	checked := 0
	for _, file := range docFiles(t) {
		abs, _ := filepath.Abs(file)
		rel, _ := filepath.Rel(root, abs)
		for _, target := range docLinkTargets(readDocFile(t, file)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, frag, _ := strings.Cut(target, "#")
			dest := abs
			if path != "" {
				dest = filepath.Join(filepath.Dir(abs), filepath.FromSlash(path))
				if r, err := filepath.Rel(root, dest); err != nil || strings.HasPrefix(r, "..") {
					t.Errorf("%s: link %q leaves the repository", rel, target)
					continue
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: no such file", rel, target)
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s: link %q: an anchor into a file that is not Markdown", rel, target)
				continue
			}
			if !pageAnchors(dest)[frag] {
				t.Errorf("%s: link %q: no heading with that anchor", rel, target)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links found: the link parser is broken", checked)
	}
}

// TestReadmeFrontPage checks the front page's size and that every command
// has its page in the manual, linked from it.
func TestReadmeFrontPage(t *testing.T) {
	onceAcrossEngines(t)
	readme := readDocFile(t, filepath.Join(docsRoot, "README.md"))
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md has %d lines; a front page has at most 300 (the manual is docs/)", n)
	}
	for _, name := range documentedCommands() {
		if !strings.Contains(readme, "(docs/"+name+".md)") {
			t.Errorf("README.md does not link docs/%s.md", name)
		}
	}
}

// documentedCommands are the commands with flags, each with its page
// docs/NAME.md.
func documentedCommands() []string {
	names := commandNames()
	if _, ok := commands["capacity"]; !ok {
		names = append(names, "capacity")
	}
	slices.Sort(names)
	return names
}

// commandFlags returns the flag set of a command, as the command builds it.
func commandFlags(name string) *pflag.FlagSet {
	if mk, ok := commands[name]; ok {
		return mk()
	}
	if name == "capacity" {
		return newCapacityFlags(&capacityOptions{})
	}
	return nil
}

// TestDocFlags checks that every flag of every command, from the flag set
// the command really parses, appears on the command's page docs/NAME.md:
// --name, and -x for a flag with a shorthand. Hidden flags (aliases kept for
// old spellings) are left out.
func TestDocFlags(t *testing.T) {
	onceAcrossEngines(t)
	for _, name := range documentedCommands() {
		page := readDocFile(t, filepath.Join(docsRoot, "docs", name+".md"))
		fs := commandFlags(name)
		n := 0
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			n++
			if !docMentions(page, "--"+f.Name) {
				t.Errorf("docs/%s.md does not document --%s (%s)", name, f.Name, f.Usage)
			}
			if f.Shorthand != "" && !docMentions(page, "-"+f.Shorthand) {
				t.Errorf("docs/%s.md does not give -%s, the shorthand of --%s", name, f.Shorthand, f.Name)
			}
		})
		if n == 0 {
			t.Errorf("%s: no flags found", name)
		}
	}
}

// mentions reports whether text has flag as a word of its own: not followed
// by a letter, a digit or '-' (so "-n" is not found in "-nokeep", nor
// "--rate" in "--rate-x"), and not preceded by one.
func docMentions(text, flag string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], flag)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(flag)
		before := j == 0 || !isFlagChar(text[j-1])
		after := end == len(text) || !isFlagChar(text[end])
		if before && after {
			return true
		}
		i = j + 1
	}
}

func isFlagChar(c byte) bool {
	return c == '-' || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func TestMentions(t *testing.T) {
	onceAcrossEngines(t)
	for _, c := range []struct {
		text, flag string
		want       bool
	}{
		{"use `-n 10`", "-n", true},
		{"the bare loop with `-nokeep`", "-n", false},
		{"`--rate R`", "--rate", true},
		{"`--rate-limit`", "--rate", false},
		{"`-k, --keepalive`", "-k", true},
		{"--http1.0", "--http1.0", true},
		{"x--format", "--format", false},
	} {
		if got := docMentions(c.text, c.flag); got != c.want {
			t.Errorf("docMentions(%q, %q) = %v", c.text, c.flag, got)
		}
	}
}
