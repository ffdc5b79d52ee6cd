package studyrun_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/backend"
	"github.com/backbench/backbench/internal/realbackend"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/studyfile"
)

// failedServeConfig returns the configuration of res whose factor which
// is level.
func failedServeConfig(t *testing.T, res *study.Result, level string) study.Configuration {
	t.Helper()
	for _, c := range res.Configurations {
		if c.Levels["which"] == level {
			return c
		}
	}
	t.Fatalf("no configuration which=%s", level)
	return study.Configuration{}
}

// checkServeKept checks that a failed configuration's directory is kept,
// in tmp, with the files named, unmarked (no later run takes it for a
// leftover), and that its failure line names it.
func checkServeKept(t *testing.T, c study.Configuration, tmp string, files ...string) {
	t.Helper()
	if c.Dir == "" || !strings.HasPrefix(c.Dir, tmp+string(filepath.Separator)) {
		t.Fatalf("%s: directory %q, want one kept in %s", c.Name, c.Dir, tmp)
	}
	if !strings.HasSuffix(c.Failure, "; its files and logs are kept in "+c.Dir) {
		t.Errorf("%s: the failure does not name its directory %s: %s", c.Name, c.Dir, c.Failure)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(c.Dir, f)); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(c.Dir), backend.DirMarker)); !os.IsNotExist(err) {
		t.Errorf("the kept directory still has the run's marker: %v", err)
	}
}

// TestStudyFailureSaysWhy: a backend that exits with status 78 after
// writing its cause into the log its configuration file names, and a
// command not on PATH, in a study of 2 rounds beside a good backend. Each
// failure is one line, said once in the progress lines and once in the
// report; the first quotes the log's last lines and keeps its directory
// (the configuration file, the script's log); the second names the
// command not found. The good backend's directory is removed.
func TestStudyFailureSaysWhy(t *testing.T) {
	f := writeServeStudy(t, `question: Why did they fail?
factors:
  which: [good, bad, missing]
backends:
  - name: good
    when: {which: good}
    command: [backbench, serve, --protocol, http, --listen, "{listen}"]
    url: "http://{target}/"
  - name: bad
    when: {which: bad}
    command: [sh, "{dir}/start.sh", "{dir}/app.conf", "{listen}"]
    files:
      - path: app.conf
        content: |
          listen = {listen}
          log_file = {dir}/logs/app.log
      - path: start.sh
        content: |
          log=$(sed -n 's/^log_file = //p' "$1")
          mkdir -p "$(dirname "$log")"
          echo "starting up"
          echo "[alert] the pool has no user" >> "$log"
          echo "[error] initialization failed, status 78" >> "$log"
          echo "fatal: see the log" >&2
          exit 78
    url: "http://{target}/"
  - name: missing
    when: {which: missing}
    command: [backbench-no-such-program-xyz, "{listen}"]
    url: "http://{target}/"
    exclusive: true
measure:
  kind: sweep
  concurrency: [1]
  requests: 20
  repeat: 2
`)
	tmp := t.TempDir()
	r := serveStudyIn(t, tmp, f, studyfile.Overrides{})
	if !r.failed() {
		t.Fatalf("the study did not fail\ntext:\n%s\nlog:\n%s", r.text, r.log)
	}
	if r.res.Rounds != 2 {
		t.Errorf("%d rounds, want 2", r.res.Rounds)
	}
	bad := failedServeConfig(t, r.res, "bad")
	for _, want := range []string{`backend "which=bad" exited at start (status 78): starting up | fatal: see the log`,
		"; logs/app.log ends: [alert] the pool has no user | [error] initialization failed, status 78;"} {
		if !strings.Contains(bad.Failure, want) {
			t.Errorf("the failure does not say %q:\n%s", want, bad.Failure)
		}
	}
	if bad.FailureKind != study.FailStart || strings.Contains(bad.Failure, "\n") {
		t.Errorf("failure kind %q, or not one line: %q", bad.FailureKind, bad.Failure)
	}
	checkServeKept(t, bad, tmp, "app.conf", "start.sh", "logs/app.log")
	missing := failedServeConfig(t, r.res, "missing")
	if want := `backend "which=missing": command not found: backbench-no-such-program-xyz (not on PATH); its files`; !strings.HasPrefix(missing.Failure, want) {
		t.Errorf("failure %q, want it to begin %q", missing.Failure, want)
	}
	checkServeKept(t, missing, tmp)
	good := failedServeConfig(t, r.res, "good")
	if good.Failed() || good.Dir != "" {
		t.Errorf("the good backend: failure %q, directory %q", good.Failure, good.Dir)
	}
	ents, _ := os.ReadDir(filepath.Dir(bad.Dir))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{filepath.Base(bad.Dir), filepath.Base(missing.Dir)}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("the study's directory holds %v, want only the failed configurations' %v", names, want)
	}
	// Said once: in the progress lines, and in the report (its notes);
	// the answers refer to it.
	for _, words := range []string{"the pool has no user", "command not found: backbench-no-such-program-xyz"} {
		if n := strings.Count(r.log, words); n != 1 {
			t.Errorf("the progress lines say %q %d times, want once:\n%s", words, n, r.log)
		}
		if n := strings.Count(r.words, words); n != 1 {
			t.Errorf("the text says %q %d times, want once:\n%s", words, n, r.text)
		}
	}
	if !strings.Contains(r.words, `backend "which=bad" did not start (its failure is in the notes)`) {
		t.Errorf("the answers do not refer to the failure:\n%s", r.text)
	}
}

// TestStudyFailurePHPFPMWithoutR: php-fpm started as root without -R
// exits at start (status 78); the failure line quotes the cause its log
// (and its stderr) gives, "user has not been defined", once, and the pool
// file and the log are kept.
func TestStudyFailurePHPFPMWithoutR(t *testing.T) {
	bin, err := realbackend.Binary()
	if err != nil {
		realbackend.Missing(t, err.Error())
	}
	if os.Getuid() != 0 {
		realbackend.Skip(t, "php-fpm refuses to start without -R only as root")
	}
	pool := `    files:
      - path: php-fpm.conf
        content: |
          [global]
          error_log = {dir}/php-fpm.log
          daemonize = no
          [www]
          listen = {addr}
          pm = static
          pm.max_children = 2
      - path: index.php
        content: |
          <?php echo "hello\n";
    url: "fcgi://{target}/index.php"
    document_root: "{dir}"
    transport: unix
`
	f := writeServeStudy(t, `question: Does php-fpm start without -R?
factors:
  flags: [with-R, without-R]
backends:
  - name: with-R
    when: {flags: with-R}
    command: [`+bin+`, -F, -R, -n, -y, "{dir}/php-fpm.conf"]
`+pool+`  - name: without-R
    when: {flags: without-R}
    command: [`+bin+`, -F, -n, -y, "{dir}/php-fpm.conf"]
`+pool+`measure:
  kind: sweep
  concurrency: [1]
  requests: 20
  repeat: 2
`)
	tmp := t.TempDir()
	r := serveStudyIn(t, tmp, f, studyfile.Overrides{})
	if !r.failed() {
		t.Fatalf("the study did not fail\ntext:\n%s\nlog:\n%s", r.text, r.log)
	}
	var c study.Configuration
	for _, cf := range r.res.Configurations {
		if cf.Levels["flags"] == "without-R" {
			c = cf
		} else if cf.Failed() {
			t.Errorf("php-fpm with -R failed: %s", cf.Failure)
		}
	}
	if !strings.Contains(c.Failure, "exited at start (status 78)") || !strings.Contains(c.Failure, "user has not been defined") {
		t.Errorf("the failure does not quote the cause:\n%s", c.Failure)
	}
	checkServeKept(t, c, tmp, "php-fpm.conf", "php-fpm.log")
	if b, err := os.ReadFile(filepath.Join(c.Dir, "php-fpm.log")); err != nil || !strings.Contains(string(b), "user has not been defined") {
		t.Errorf("the kept log: %v\n%s", err, b)
	}
	for name, out := range map[string]string{"the progress lines": r.log, "the text": r.words} {
		if n := strings.Count(out, "user has not been defined"); n != 1 {
			t.Errorf("%s say it %d times, want once:\n%s", name, n, out)
		}
	}
}
