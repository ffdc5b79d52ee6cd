package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
)

// The credentials of TestNoCredentialInResults, each given one way.
const (
	secretBearer = "Zq7bearerTOKEN"
	secretCookie = "Zq7cookieHDR"
	secretBasic  = "Zq7basicPASS"
	secretC      = "Zq7cookieFLAG"
	secretParam  = "Zq7paramPASS"
)

// secretArgs give a credential five ways: -H Authorization, -H Cookie
// (glued, no blank), -A, -C and --param DB_PASSWORD=.
func secretArgs(fcgi bool) []string {
	a := []string{"-H", "Authorization: Bearer " + secretBearer, "-HCookie:sid=" + secretCookie,
		"-A", "user:" + secretBasic, "--cookie=s=" + secretC}
	if fcgi {
		a = append(a, "--param", "DB_PASSWORD="+secretParam)
	}
	return a
}

// secretsIn returns the credentials (and the base64 of -A's) found in b.
func secretsIn(b []byte) []string {
	var found []string
	for _, s := range []string{secretBearer, secretCookie, secretBasic, secretC, secretParam,
		base64.StdEncoding.EncodeToString([]byte("user:" + secretBasic))} {
		if bytes.Contains(b, []byte(s)) {
			found = append(found, s)
		}
	}
	return found
}

// TestNoCredentialInResults gives a credential five ways to the real binary
// (so that the recorded command line is the one typed) and greps every byte
// of every file written and of stdout of bench (text and JSON, -g, -e,
// --raw), sweep (its five files), capacity (text and JSON, its files), merge
// (text, JSON, -e), compare and report, against both built-in backends. A
// file saved with --keep-secrets keeps them, and merge and report written
// from it redact them again. The record's own redaction, what
// --keep-secrets keeps in it and the requests sent with them are tested in
// internal/execute (TestCredentialsInRecord).
func TestNoCredentialInResults(t *testing.T) {
	onceAcrossEngines(t)
	bin := buildBinary(t)
	for _, proto := range []string{fixtures.ProtoHTTP, fixtures.ProtoFCGI} {
		t.Run(proto, func(t *testing.T) {
			srv := fixtures.StartTB(t, proto, "tcp", fixtures.Options{BodyBytes: 64})
			dir := t.TempDir()
			url := srv.URL("/x")
			sec := secretArgs(proto == fixtures.ProtoFCGI)
			var stdouts []string
			run := func(args ...string) string {
				code, out, errs := runBinCode(t, bin, dir, args...)
				if code != 0 {
					t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, errs)
				}
				stdouts = append(stdouts, strings.Join(args[:1], "")+": "+out)
				return out
			}
			bench := func(extra ...string) []string {
				return append(append([]string{"bench", "-q", "-n", "20", "-c", "2"}, sec...), append(extra, url)...)
			}
			run(bench("-g", "g.tsv", "-e", "e.csv", "--raw", "raw.csv")...)
			os.WriteFile(filepath.Join(dir, "a.json"), []byte(run(bench("--format", "json")...)), 0o644)
			os.WriteFile(filepath.Join(dir, "b.json"), []byte(run(bench("--format", "json")...)), 0o644)
			for _, out := range []string{"sw", "sw2"} {
				run(append(append([]string{"sweep", "-q", "-n", "20", "-c", "1,2", "--out", out}, sec...), url)...)
			}
			capArgs := append(append([]string{"capacity", "--model", "closed", "--start", "1", "--max", "2",
				"-t", "0.1", "--confirm", "0.5", "--warmup", "0", "--slo", "p99<=5s", "--out", "cap"}, sec...), url)
			run(capArgs...)
			run(append(capArgs[:len(capArgs):len(capArgs)], "--format", "json")...)
			run("merge", "-e", "merged.csv", "a.json", "b.json")
			os.WriteFile(filepath.Join(dir, "merged.json"), []byte(run("merge", "--format", "json", "a.json", "b.json")), 0o644)
			run("merge", "sw/sweep.json", "sw2/sweep.json")
			run("compare", "a.json", "b.json")
			run("report", "-o", "page.html", "a.json", "merged.json", "sw/sweep.json", "cap/capacity.json")

			// A private file keeps them; what is made from it again does not.
			kept := run(bench("--format", "json", "--keep-secrets")...)
			stdouts = stdouts[:len(stdouts)-1]
			os.WriteFile(filepath.Join(dir, "private.json"), []byte(kept), 0o600)
			run("merge", "--format", "json", "private.json", "a.json")
			run("report", "-o", "private.html", "private.json")

			n := 0
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() || d.Name() == "private.json" {
					return err
				}
				n++
				b, _ := os.ReadFile(p)
				if found := secretsIn(b); len(found) > 0 {
					t.Errorf("%s holds %v", p, found)
				}
				return nil
			})
			if n < 22 {
				t.Errorf("only %d files were written", n)
			}
			for _, out := range stdouts {
				if found := secretsIn([]byte(out)); len(found) > 0 {
					t.Errorf("stdout of %s holds %v", out[:strings.IndexByte(out, ':')], found)
				}
			}
		})
	}
}
