package protocol_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// schemeComparison matches what picking code by a scheme string looks
// like: comparing a Scheme or a recorded Protocol, naming the scheme
// constants, or a protocol's name as a literal; and what parsing a
// scheme out of a URL looks like: testing a URL for a scheme's prefix
// (HasPrefix(url, "https:")) or cutting it at "://" (ask sockets.SchemeOf
// and sockets.SchemeUsesTLS, or protocol.OfURL).
var schemeComparison = regexp.MustCompile(`Scheme ==|Scheme !=|Protocol == "|Protocol != "|SchemeFCGI|SchemeHTTP|"http"|"https"|"fcgi"|` +
	`HasPrefix\(.*"[A-Za-z][A-Za-z0-9+.-]*:/{0,2}"\)|Cut\(.*"://"\)`)

// allowed are the lines outside the registry that match and are not
// dispatch, by file and a part of the line, with the reason.
var allowed = []struct{ file, line, why string }{
	{"internal/trials/factors.go", `a.Protocol == "http"`, "factor values are data (a comment there says so)"},
	{"internal/plan/mix.go", `u.Scheme != r.Target.Scheme || u.Host != r.Target.Host`, "a targets file's full URL must name the command line's own target: an equality of addresses, not dispatch"},
	{"cmd/backbench/main.go", `var internalPrefixes`, "package names dropped from error messages, not schemes"},
	{"cmd/backbench/serve.go", `NewChoice(&o.Protocol, "http", "fcgi", "http")`, "which built-in backend serve starts (package fixtures)"},
	{"internal/serve/serve.go", `proto = "https"`, "the listening line of serve's own TLS backend"},
	{"internal/trials/factors.go", `var protocolWords`, "the words a sentence gives a protocol's name (data, not dispatch)"},
	{"internal/studyfile/spec.go", `FactorHTTP = "http"`, "the name of a study file's HTTP-version factor, not a scheme"},
	{"internal/study/answer.go", `FactorHTTP = "http"`, "the name of a study file's HTTP-version factor, not a scheme"},
	{"internal/studyfile/backend.go", `scheme != "fcgi" && scheme != "http" && scheme != "https"`, "a study file is checked before anything starts, each error at its line:column (the registry knows no positions); internal/studyfile imports nothing of the module"},
	{"internal/studyfile/backend.go", `strings.Cut(b.URL, "://")`, "as above: the URL's scheme read to check it at its position"},
	{"internal/studyfile/backend.go", `b.Insecure && scheme != "https"`, "as above: insecure applies to https URLs, said at the key's position"},
	{"internal/studyfile/backend.go", `b.DocumentRoot != "" && scheme != "fcgi"`, "as above: document_root applies to fcgi URLs, said at the key's position"},
}

// TestNoSchemeDispatch keeps the rule of the registry: outside
// internal/protocol (the registry and the built-in adapters) and package
// sockets (the URL parser), no non-test Go file of cmd/ or internal/
// compares a scheme or a recorded protocol name; each asks
// protocol.Lookup instead. A new protocol then touches no file outside
// its own.
func TestNoSchemeDispatch(t *testing.T) {
	root := filepath.Join("..", "..")
	var files []string
	for _, dir := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel == "internal/protocol" || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 50 {
		t.Fatalf("found only %d Go files under cmd/ and internal/: wrong root?", len(files))
	}
	for _, rel := range files {
		f, err := os.Open(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(line), "//") || !schemeComparison.MatchString(line) || isAllowed(rel, line) {
				continue
			}
			t.Errorf("%s:%d: a scheme comparison outside the protocol registry (ask protocol.Lookup): %s", rel, n, strings.TrimSpace(line))
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func isAllowed(file, line string) bool {
	for _, a := range allowed {
		if a.file == file && strings.Contains(line, a.line) {
			return true
		}
	}
	return false
}

// TestNoSchemeDispatchCatches: the pattern finds each form the rule
// forbids (a test of the test).
func TestNoSchemeDispatchCatches(t *testing.T) {
	for _, line := range []string{
		`if tgt.Scheme == sockets.SchemeFCGI {`,
		`if p.Target.Scheme != sockets.SchemeHTTP {`,
		`case s.Target.Protocol == "fcgi":`,
		`if s.Target.Protocol != "fcgi" {`,
		`f.Protocol, f.TLS = "http", true`,
		`if scheme == "https" {`,
		`if tls || strings.HasPrefix(strings.ToLower(s.Target.URL), "https:") {`,
		`if strings.HasPrefix(u, "fcgi://") {`,
		`scheme, _, ok := strings.Cut(url, "://")`,
	} {
		if !schemeComparison.MatchString(line) {
			t.Errorf("not caught: %s", line)
		}
	}
	for _, line := range []string{`if strings.HasPrefix(arg, "--") {`, `label, url, ok := strings.Cut(arg, "=")`} {
		if schemeComparison.MatchString(line) {
			t.Errorf("caught, though no scheme is parsed: %s", line)
		}
	}
	if isAllowed("cmd/backbench/bench.go", `if tgt.Scheme == sockets.SchemeFCGI {`) {
		t.Error("an allowance leaks to other files")
	}
}
