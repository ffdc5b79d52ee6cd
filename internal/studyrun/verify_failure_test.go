package studyrun_test

import (
	"os"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/realbackend"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/studyfile"
)

// verifyServeFailures runs the study file f, whose every configuration
// fails its verification, and returns its configurations by the level of
// factor.
func verifyServeFailures(t *testing.T, f, factor string) map[string]study.Configuration {
	t.Helper()
	r := serveStudy(t, f, studyfile.Overrides{})
	if !r.failed() {
		t.Fatalf("the study did not fail\ntext:\n%s\nlog:\n%s", r.text, r.log)
	}
	out := map[string]study.Configuration{}
	for _, c := range r.res.Configurations {
		if c.FailureKind != study.FailVerify || strings.Contains(c.Failure, "\n") {
			t.Errorf("%s: failure %q (%s), want one line of kind %s", c.Name, c.Failure, c.FailureKind, study.FailVerify)
		}
		out[c.Levels[factor]] = c
	}
	return out
}

// TestStudyVerifySaysWhy: a verification answered 404 says the status,
// the start of the body (one line) and the usual cause: for a FastCGI
// backend, SCRIPT_FILENAME (its value), document_root and the script
// name in the URL; for an HTTP backend, the URL's path. Built-in backends
// (backbench serve --status 404 --body 40).
func TestStudyVerifySaysWhy(t *testing.T) {
	f := writeServeStudy(t, `question: Does a backend that answers 404 say why it fails?
factors:
  proto: [http, fcgi]
backends:
  - name: http
    when: {proto: http}
    command: [backbench, serve, --protocol, http, --status, "404", --body, "40", --listen, "{listen}"]
    url: "http://{target}/app/"
  - name: fcgi
    when: {proto: fcgi}
    command: [backbench, serve, --protocol, fcgi, --status, "404", --body, "40", --listen, "{listen}"]
    url: "fcgi://{target}/"
    document_root: /srv/www
measure:
  kind: bench
  concurrency: [1]
  requests: 10
  repeat: 1
`)
	cs := verifyServeFailures(t, f, "proto")
	for level, words := range map[string][]string{
		"http": {"status 404, want 200", "the body begins \"", "an HTTP 404", "http://127.0.0.1:", "/app/", "check the url's path"},
		"fcgi": {"status 404, want 200", "the body begins \"", "SCRIPT_FILENAME", "(it was /srv/www)", "document_root", "names the script"},
	} {
		c, ok := cs[level]
		if !ok {
			t.Errorf("no configuration %s", level)
			continue
		}
		for _, w := range words {
			if !strings.Contains(c.Failure, w) {
				t.Errorf("%s: the failure does not say %q:\n%s", level, w, c.Failure)
			}
		}
	}
}

// TestStudyVerifyPHPFPMNoScript: php-fpm sent a URL without the script
// name (fcgi://{target}/, document_root the configuration's directory)
// answers its verification with 403 or 404; the failure quotes php-fpm's
// body ("Access denied." or "File not found.") and names the script in
// the URL as the cause. Skipped without php-fpm (CI has it).
func TestStudyVerifyPHPFPMNoScript(t *testing.T) {
	bin, err := realbackend.Binary()
	if err != nil {
		realbackend.Missing(t, err.Error())
	}
	if os.Getuid() != 0 {
		realbackend.Skip(t, "php-fpm runs its workers as root (-R) only as root")
	}
	f := writeServeStudy(t, `question: Does php-fpm without the script name say why it fails?
factors:
  children: [1, 2]
backends:
  - name: php-fpm
    command: [`+bin+`, -F, -R, -n, -y, "{dir}/php-fpm.conf"]
    files:
      - path: php-fpm.conf
        content: |
          [global]
          error_log = {dir}/php-fpm.log
          daemonize = no
          [www]
          listen = {addr}
          pm = static
          pm.max_children = {children}
      - path: index.php
        content: |
          <?php echo "hello\n";
    url: "fcgi://{target}/"
    document_root: "{dir}"
    transport: unix
measure:
  kind: bench
  concurrency: [1]
  requests: 10
  repeat: 1
`)
	for _, c := range verifyServeFailures(t, f, "children") {
		checkServeFPMNoScript(t, c)
	}
}

// checkServeFPMNoScript checks the verification failure of php-fpm sent
// no script name.
func checkServeFPMNoScript(t *testing.T, c study.Configuration) {
	t.Helper()
	if !strings.Contains(c.Failure, "status 403, want 200") && !strings.Contains(c.Failure, "status 404, want 200") {
		t.Fatalf("the failure does not give php-fpm's status:\n%s", c.Failure)
	}
	for _, w := range []string{"SCRIPT_FILENAME", "names the script (/index.php, not /)"} {
		if !strings.Contains(c.Failure, w) {
			t.Errorf("the failure does not say %q:\n%s", w, c.Failure)
		}
	}
	if !strings.Contains(c.Failure, "Access denied.") && !strings.Contains(c.Failure, "File not found.") {
		t.Errorf("the failure does not quote php-fpm's body:\n%s", c.Failure)
	}
}
