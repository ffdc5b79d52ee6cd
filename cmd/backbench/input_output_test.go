package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
)

// withStdin makes s the standard input of -p - and -u - for the test.
func withStdin(t *testing.T, s string) {
	t.Helper()
	old := stdin
	stdin = strings.NewReader(s)
	stdinBody.read, stdinBody.data, stdinBody.err = false, nil, nil
	t.Cleanup(func() {
		stdin = old
		stdinBody.read, stdinBody.data, stdinBody.err = false, nil, nil
	})
}

// TestBodyFromStdin: -p - and -u - send standard input as the body; a
// sweep of two series sends it in both (stdin is read once).
func TestBodyFromStdin(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	for _, tc := range []struct{ flag, method string }{{"-p", "POST"}, {"-u", "PUT"}} {
		withStdin(t, "0123456789")
		code, out, errs := runMain(t, context.Background(), "bench", "-q", "-v", "2", "-n", "3", tc.flag, "-", srv.URL("/headers"))
		if code != 0 || !strings.Contains(out, "Failed requests:        0\n") {
			t.Fatalf("%s -: exit %d %s", tc.flag, code, errs)
		}
		if strings.Count(errs, tc.method+" /headers HTTP/1.1") != 3 || strings.Count(errs, "Content-Length: 10\r\n") < 3 {
			t.Errorf("%s -: the requests did not carry stdin:\n%s", tc.flag, errs)
		}
	}
	withStdin(t, "0123456789")
	code, _, errs := runMain(t, context.Background(), "sweep", "-q", "-v", "2", "-c", "1", "-n", "2", "--warmup", "0", "-p", "-", "--out", t.TempDir(),
		"a="+srv.URL("/headers"), "b="+srv.URL("/headers"))
	if code != 0 {
		t.Fatalf("sweep: exit %d %s", code, errs)
	}
	if n := strings.Count(errs, "Content-Length: 10\r\n"); n < 4 || regexp.MustCompile(`Content-Length: 0\s`).MatchString(errs) {
		t.Errorf("sweep -p -: %d requests with the body:\n%s", n, errs)
	}
}

// TestHeaderFile: -H @FILE adds the headers of FILE, one a line, blank
// lines and # comments skipped, with -H NAME: VALUE beside it; a missing
// file is one usage error.
func TestHeaderFile(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	file := filepath.Join(t.TempDir(), "headers")
	os.WriteFile(file, []byte("# the headers of the test\n\nX-One: 1\r\n  # indented comment\nX-Two: a, b\n"), 0o644)
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "-v", "2", "-n", "1", "-H", "@"+file, "-H", "X-Three: 3", srv.URL("/headers"))
	if code != 0 || !strings.Contains(out, "Failed requests:        0\n") {
		t.Fatalf("exit %d %s", code, errs)
	}
	for _, h := range []string{"\r\nX-One: 1\r\n", "\r\nX-Two: a, b\r\n", "\r\nX-Three: 3\r\n"} {
		if !strings.Contains(errs, h) {
			t.Errorf("the request lacks %q:\n%s", h, errs)
		}
	}
	if strings.Contains(errs, "#") {
		t.Errorf("a comment was sent:\n%s", errs)
	}
	code, _, errs = runMain(t, context.Background(), "bench", "-H", "@"+file+".none", srv.URL("/headers"))
	if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "cannot read -H @"+file+".none") {
		t.Errorf("missing file: exit %d %q", code, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, []byte("X-Fine: 1\nno colon here\n"), 0o644)
	if code, _, errs = runMain(t, context.Background(), "bench", "-H", "@"+bad, srv.URL("/headers")); code != exitUsage || !strings.Contains(errs, `bad header "no colon here"`) {
		t.Errorf("bad line: exit %d %q", code, errs)
	}
}

// TestOutputFile: -o FILE writes bench's report (text or JSON) and probe's
// to FILE, nothing to stdout; a bad path is a usage error before any
// request; a run that fails before its report leaves no file.
func TestOutputFile(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	text := filepath.Join(dir, "report.txt")
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "-n", "20", "-o", text, srv.URL("/"))
	if data, _ := os.ReadFile(text); code != 0 || out != "" || !strings.Contains(string(data), "Complete requests:      20\n") {
		t.Errorf("text: exit %d, stdout %q, stderr %q, file:\n%s", code, out, errs, data)
	}
	js := filepath.Join(dir, "report.json")
	code, out, errs = runMain(t, context.Background(), "bench", "-n", "20", "--format", "json", "--output", js, srv.URL("/"))
	var s struct {
		Complete int64 `json:"complete_requests"`
	}
	data, _ := os.ReadFile(js)
	if err := json.Unmarshal(data, &s); code != 0 || out != "" || err != nil || s.Complete != 20 {
		t.Errorf("json: exit %d, stdout %q, stderr %q, %v, file:\n%s", code, out, errs, err, data)
	}
	if srv.Requests() != 40 {
		t.Errorf("%d requests, want 40", srv.Requests())
	}
	code, _, errs = runMain(t, context.Background(), "bench", "-n", "20", "-o", filepath.Join(dir, "no", "such", "dir"), srv.URL("/"))
	if code != exitUsage || !strings.Contains(errs, "cannot create -o file") || srv.Requests() != 40 {
		t.Errorf("bad path: exit %d %q, %d requests", code, errs, srv.Requests())
	}
	gone := filepath.Join(dir, "gone.txt")
	if code, _, _ = runMain(t, context.Background(), "bench", "-q", "-o", gone, "http://"+deadTCPAddr(t)+"/"); code != exitUnreachable {
		t.Errorf("unreachable: exit %d", code)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("an unreachable target left %s: %v", gone, err)
	}
	pj := filepath.Join(dir, "probe.json")
	code, out, errs = runMain(t, context.Background(), "probe", "--format", "json", "-o", pj, "--only", "http11_persistent", srv.URL("/"))
	data, _ = os.ReadFile(pj)
	if code != 0 || out != "" || !json.Valid(data) || !strings.Contains(string(data), "http11_persistent") {
		t.Errorf("probe: exit %d, stdout %q, stderr %q, file:\n%s", code, out, errs, data)
	}
}
