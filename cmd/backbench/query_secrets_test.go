package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// lineRecorder is an HTTP backend on 127.0.0.1 that keeps the request
// line of every request it answers, to show what was sent on the wire.
type lineRecorder struct {
	url   string
	mu    sync.Mutex
	lines []string
}

// startLineRecorder starts a lineRecorder, stopped when the test ends.
func startLineRecorder(t *testing.T) *lineRecorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &lineRecorder{url: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.lines = append(r.lines, req.Method+" "+req.RequestURI+" "+req.Proto)
		r.mu.Unlock()
		w.Write([]byte("ok\n"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return r
}

// requestLines returns the request lines received so far.
func (r *lineRecorder) requestLines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// runBinCode runs the built binary in dir and returns its exit status,
// stdout and stderr.
func runBinCode(t *testing.T, bin, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return 0, out.String(), errb.String()
}

// TestNoQueryCredentialInResults gives a credential in a target's query
// string (?api_key=, ?access_token=) to the real binary and greps every
// byte of every file written, of stdout and of stderr of bench (text,
// JSON, Markdown, -g, -e, --raw), sweep (two series whose labels are
// their URLs), capacity, study (a built-in backend), merge (of runs and
// of sweeps), compare and report: the secret is nowhere, and study.json's
// series show REDACTED for it. The requests sent carry it (the backend's
// request lines). What a run's record shows instead is tested in
// internal/execute (TestQueryCredentialInRecord), the refusal of a URL
// with user information in internal/plan (TestCredentialURLRefused).
func TestNoQueryCredentialInResults(t *testing.T) {
	onceAcrossEngines(t)
	bin := studyBinary(t)
	for _, name := range []string{"api_key", "access_token"} {
		t.Run(name, func(t *testing.T) {
			srv := startLineRecorder(t)
			secret := "Qz8" + strings.ReplaceAll(name, "_", "") + "SECRET"
			query := "?page=2&" + name + "=" + secret
			url, url2 := srv.url+"/a"+query, srv.url+"/b"+query
			dir := t.TempDir()
			var outs []string // "command: stdout and stderr" of every run
			run := func(args ...string) string {
				t.Helper()
				code, out, errs := runBinCode(t, bin, dir, args...)
				if code != 0 {
					t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, errs)
				}
				outs = append(outs, args[0]+": "+out+errs)
				return out
			}
			save := func(file, out string) {
				if err := os.WriteFile(filepath.Join(dir, file), []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			bench := []string{"bench", "-n", "20", "-c", "2"}
			run(append(bench, "-g", "g.tsv", "-e", "e.csv", "--raw", "raw.csv", url)...)
			run(append(bench, "--format", "markdown", url)...)
			save("a.json", run(append(bench, "-q", "--format", "json", url)...))
			save("b.json", run(append(bench, "-q", "--format", "json", url)...))
			for _, out := range []string{"sw", "sw2"} {
				run("sweep", "-n", "20", "-c", "1,2", "--out", out, url, url2)
			}
			capArgs := []string{"capacity", "--model", "closed", "--start", "1", "--max", "2",
				"-t", "0.1", "--confirm", "0.5", "--warmup", "0", "--slo", "p99<=5s", "--out", "cap", url}
			run(capArgs...)
			save("cap.json", run(append(capArgs[:len(capArgs):len(capArgs)], "-q", "--format", "json")...))
			sent := len(srv.requestLines())

			studyFile := filepath.Join(dir, "study.yaml")
			os.WriteFile(studyFile, []byte(`question: Does a key in the query string stay out of the results?
factors:
  delay: [1ms, 2ms]
backends:
  - name: model
    command: [backbench, serve, --protocol, http, --delay, "{delay}", --listen, "{listen}"]
    url: "http://{target}/x`+query+`"
measure:
  kind: bench
  concurrency: [1]
  requests: 20
  repeat: 2
`), 0o644)
			run("study", "--seed", "7", "--out", "st", studyFile)

			run("merge", "-e", "merged.csv", "a.json", "b.json")
			save("merged.json", run("merge", "--format", "json", "a.json", "b.json"))
			save("merged-sweep.json", run("merge", "--format", "json", "sw/sweep.json", "sw2/sweep.json"))
			run("merge", "sw/sweep.json", "sw2/sweep.json")
			run("compare", "a.json", "b.json")
			run("compare", "--format", "markdown", "a.json", "b.json")
			run("compare", "sw/sweep.json", "sw2/sweep.json")
			run("report", "-o", "page.html", "a.json", "merged.json", "sw/sweep.json", "merged-sweep.json",
				"cap/capacity.json", "st/study.json")

			n := 0
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() || p == studyFile {
					return err
				}
				n++
				b, _ := os.ReadFile(p)
				if bytes.Contains(b, []byte(secret)) {
					t.Errorf("%s holds %s", p, secret)
				}
				return nil
			})
			if n < 25 {
				t.Errorf("only %d files were written", n)
			}
			for _, out := range outs {
				if strings.Contains(out, secret) {
					t.Errorf("the output of %s holds %s:\n%s", out[:strings.IndexByte(out, ':')], secret, out)
				}
			}
			st, _ := os.ReadFile(filepath.Join(dir, "st", "study.json"))
			if !bytes.Contains(st, []byte(name+"=REDACTED")) {
				t.Errorf("study.json's series do not show %s=REDACTED", name)
			}

			// The requests sent carry the real value.
			lines := srv.requestLines()
			if sent < 100 {
				t.Fatalf("the backend received %d requests", sent)
			}
			for _, l := range lines[:sent] {
				if !strings.Contains(l, name+"="+secret) {
					t.Fatalf("a request was sent without the credential: %q", l)
				}
			}
		})
	}
}

// TestQueryCredentialKept: with --keep-secrets, bench, sweep, capacity
// and merge keep a query's credential in what they write, for a private
// file (the JSON's target, document path and command line), and report
// shows it.
func TestQueryCredentialKept(t *testing.T) {
	onceAcrossEngines(t)
	bin := studyBinary(t)
	srv := startLineRecorder(t)
	secret := "Qz8keptSECRET"
	url := srv.url + "/k?api_key=" + secret
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		code, out, errs := runBinCode(t, bin, dir, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, errs)
		}
		return out
	}
	js := run("bench", "-q", "-n", "10", "--keep-secrets", "--format", "json", url)
	os.WriteFile(filepath.Join(dir, "kept.json"), []byte(js), 0o600)
	os.WriteFile(filepath.Join(dir, "kept2.json"), []byte(run("bench", "-q", "-n", "10", "--keep-secrets", "--format", "json", url)), 0o600)
	for _, want := range []string{`"url": "` + url + `"`, `"document_path": "/k?api_key=` + secret + `"`} {
		if !strings.Contains(js, want) {
			t.Errorf("bench --keep-secrets: the JSON lacks %s", want)
		}
	}
	run("sweep", "-q", "-n", "10", "-c", "1", "--keep-secrets", "--out", "sw", url)
	run("capacity", "-q", "--model", "closed", "--start", "1", "--max", "2", "-t", "0.1", "--confirm", "0.5",
		"--warmup", "0", "--slo", "p99<=5s", "--keep-secrets", "--out", "cap", url)
	merged := run("merge", "--format", "json", "--keep-secrets", "kept.json", "kept2.json")
	run("report", "--keep-secrets", "-o", "page.html", "kept.json")
	for file, b := range map[string]string{"merge": merged, "sweep.json": read(t, dir, "sw/sweep.json"),
		"capacity.json": read(t, dir, "cap/capacity.json"), "page.html": read(t, dir, "page.html")} {
		if !strings.Contains(b, "api_key="+secret) {
			t.Errorf("%s with --keep-secrets lost the credential", file)
		}
	}
	// Without it, merge and report redact what the private file kept.
	if merged := run("merge", "--format", "json", "kept.json", "kept2.json"); strings.Contains(merged, secret) {
		t.Errorf("merge without --keep-secrets kept the credential of its input")
	}
	run("report", "-o", "shared.html", "kept.json")
	if strings.Contains(read(t, dir, "shared.html"), secret) {
		t.Errorf("report without --keep-secrets kept the credential of its input")
	}
}

// read returns the text of the file name under dir.
func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(fmt.Errorf("%s: %w", name, err))
	}
	return string(b)
}
