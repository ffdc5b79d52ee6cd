package targets_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/realbackend"
)

// phpfpmTargetScript is the PHP of every script of TestTargetsPHPFPM: it writes
// one line of what php-fpm gave it (its file's name, SCRIPT_FILENAME,
// SCRIPT_NAME, REQUEST_URI, QUERY_STRING, REQUEST_METHOD, and the length
// and MD5 of the body it read) to the log %s, and answers the same line.
const phpfpmTargetScript = `<?php
$s = $_SERVER;
$in = file_get_contents('php://input');
$line = basename(__FILE__) . '|' . ($s['SCRIPT_FILENAME'] ?? '-') . '|' . ($s['SCRIPT_NAME'] ?? '-') . '|' .
	($s['REQUEST_URI'] ?? '-') . '|' . ($s['QUERY_STRING'] ?? '-') . '|' . ($s['REQUEST_METHOD'] ?? '-') . '|' .
	strlen($in) . '|' . md5($in) . "\n";
file_put_contents(%q, $line, FILE_APPEND | LOCK_EX);
header('Content-Type: text/plain');
echo $line;
`

// TestTargetsPHPFPM runs (execute.Run, the plan built by plan.Options as
// bench --targets builds it: plan stands above targets) a targets file of paths only (GET /a.php of
// weight 2, GET /b.php with a query, POST /echo.php with a 70,000-byte
// binary body, more than one FastCGI record) against php-fpm over TCP
// with keep-alive and over a Unix socket without: php-fpm ran, for every
// request of each target, the script that --document-root joined with
// the target's path names (SCRIPT_FILENAME), with the target's
// SCRIPT_NAME, REQUEST_URI, QUERY_STRING and method, and read the POST
// body byte for byte (its MD5); the lines the scripts logged are, per
// target, as many as bench counted, and bench's body bytes per target
// are the scripts' answers.
func TestTargetsPHPFPM(t *testing.T) {
	if os.Getenv("BACKBENCH_ENGINE") != "" {
		t.Skip("runs once, with the default engine: it tests what php-fpm is sent, not the load path")
	}
	if _, err := realbackend.Binary(); err != nil {
		realbackend.Missing(t, err.Error())
	}
	dir := t.TempDir()
	body := make([]byte, 70000)
	for i := range body {
		body[i] = byte(i*7 + i/251) // every byte value, NUL, CR and LF among them
	}
	if err := os.WriteFile(filepath.Join(dir, "body.bin"), body, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(file, []byte("GET /a.php\n# weight: 2\n\nGET /b.php?x=1&y=%2F\n\n"+
		"POST /echo.php?id=7\nContent-Type: application/octet-stream\n@body.bin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(body)
	const empty = "d41d8cd98f00b204e9800998ecf8427e"
	for _, c := range []struct {
		network string
		ka      bool
	}{{"tcp", true}, {"unix", false}} {
		t.Run(c.network, func(t *testing.T) {
			fpm := realbackend.PHPFPM(t, c.network)
			log := filepath.Join(t.TempDir(), "seen.log")
			for _, s := range []string{"a.php", "b.php", "echo.php"} {
				if err := os.WriteFile(filepath.Join(fpm.DocRoot, s), []byte(fmt.Sprintf(phpfpmTargetScript, log)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			o := plan.Defaults(fpm.URL("/"))
			o.Requests, o.RequestsSet, o.Concurrency, o.ConcurrencySet = 200, true, 4, true
			o.Targets, o.DocumentRoot, o.KeepAlive = file, fpm.DocRoot, c.ka
			l, err := o.Build()
			if err != nil {
				t.Fatal(err)
			}
			run, err := execute.Run(context.Background(), l.Plan, execute.Options{Stderr: io.Discard, Quiet: true, Observe: true})
			if err != nil {
				t.Fatal(err)
			}
			s := run.Summary
			want := map[string]string{
				"GET /a.php":           "a.php|" + fpm.DocRoot + "/a.php|/a.php|/a.php||GET|0|" + empty + "\n",
				"GET /b.php?x=1&y=%2F": "b.php|" + fpm.DocRoot + "/b.php|/b.php|/b.php?x=1&y=%2F|x=1&y=%2F|GET|0|" + empty + "\n",
				"POST /echo.php?id=7": "echo.php|" + fpm.DocRoot + "/echo.php|/echo.php|/echo.php?id=7|id=7|POST|70000|" +
					hex.EncodeToString(sum[:]) + "\n",
			}
			shares := map[string]int64{"GET /a.php": 100, "GET /b.php?x=1&y=%2F": 50, "POST /echo.php?id=7": 50}
			if s.Complete != 200 || s.Failed != 0 || s.Non2xx != 0 || len(s.Targets) != 3 {
				t.Fatalf("%d complete, %d failed, %d non-2xx, targets %+v", s.Complete, s.Failed, s.Non2xx, s.Targets)
			}
			seen, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			lines := map[string]int64{}
			for _, l := range strings.SplitAfter(string(seen), "\n") {
				if l != "" {
					lines[l]++
				}
			}
			for _, tg := range s.Targets {
				line := want[tg.Target]
				if tg.Requests != shares[tg.Target] || tg.Failed != 0 {
					t.Errorf("%s: %d requests, %d failed, want %d and 0", tg.Target, tg.Requests, tg.Failed, shares[tg.Target])
				}
				if lines[line] != tg.Requests {
					t.Errorf("%s: php-fpm logged %q %d times, bench counted %d", tg.Target, line, lines[line], tg.Requests)
				}
				if tg.BodyBytes != tg.Requests*int64(len(line)) {
					t.Errorf("%s: %d body bytes, want %d answers of %d bytes", tg.Target, tg.BodyBytes, tg.Requests, len(line))
				}
				delete(lines, line)
			}
			if len(lines) > 0 {
				t.Errorf("php-fpm logged lines no target should make: %v", lines)
			}
			if bytes.Contains(seen, []byte("|-|")) {
				t.Errorf("a script lacked a parameter:\n%s", seen)
			}
		})
	}
}
