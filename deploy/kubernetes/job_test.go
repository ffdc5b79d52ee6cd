// Package kubernetes holds the Kubernetes manifest that runs backbench
// generators as an Indexed Job (backbench-job.yaml) and its test. It is a
// module of its own so that the Kubernetes API types the test validates
// against stay out of backbench's dependencies.
package kubernetes

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// TestIndexedJob validates backbench-job.yaml without a cluster (kubectl
// create --dry-run=client asks an API server for discovery and the schema,
// so it needs one): decoded as the API server decodes it into the
// Kubernetes API's own Job type (case-sensitive, strict), an unknown,
// misspelled or duplicate field or a wrong type fails. It must be
// an Indexed Job with parallelism = completions, not retried, running the
// image's entrypoint without a shell; and its container's arguments, with
// @START_AT@ replaced as docs/scale-out.md says and $(START_AT) expanded as
// Kubernetes does, must be a bench command line that backbench accepts,
// with --start-at, -q and JSON on stdout.
func TestIndexedJob(t *testing.T) {
	b, err := os.ReadFile("backbench-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// As the API server reads it: case-sensitive, no unknown or
	// duplicate field.
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	strict, err := kjson.UnmarshalStrict(j, &job, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err = errors.Join(append(strict, err)...); err != nil {
		t.Fatalf("not a valid batch/v1 Job: %v", err)
	}
	s := &job.Spec
	switch {
	case job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Name == "":
		t.Errorf("apiVersion %q kind %q name %q", job.APIVersion, job.Kind, job.Name)
	case s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion:
		t.Errorf("completionMode is not Indexed")
	case s.Parallelism == nil || s.Completions == nil || *s.Parallelism != *s.Completions || *s.Completions < 2:
		t.Errorf("parallelism %v, completions %v: want equal, at least 2", s.Parallelism, s.Completions)
	case s.BackoffLimit == nil || *s.BackoffLimit != 0:
		t.Errorf("backoffLimit %v, want 0: a late retry misses the window", s.BackoffLimit)
	}
	pod := &s.Template.Spec
	if pod.RestartPolicy != "Never" || len(pod.Containers) != 1 {
		t.Fatalf("restartPolicy %q, %d containers: want Never and one", pod.RestartPolicy, len(pod.Containers))
	}
	c := pod.Containers[0]
	if len(c.Command) != 0 {
		t.Errorf("command %q: the image's entrypoint is backbench, no shell", c.Command)
	}
	at := time.Now().Add(time.Minute).Unix()
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = strings.ReplaceAll(e.Value, "@START_AT@", strconv.FormatInt(at, 10))
	}
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	var args []string
	for _, a := range c.Args {
		args = append(args, ref.ReplaceAllStringFunc(a, func(m string) string {
			v, ok := env[m[2:len(m)-1]]
			if !ok {
				t.Errorf("arg %q names a variable the container does not set", a)
			}
			return v
		}))
	}
	joined := " " + strings.Join(args, " ") + " "
	if len(args) == 0 || args[0] != "bench" || !strings.Contains(joined, " --start-at="+strconv.FormatInt(at, 10)+" ") ||
		!strings.Contains(joined, " -q ") || !strings.Contains(joined, " --format=json ") {
		t.Fatalf("args %q: want bench with -q, --format=json and --start-at=$(START_AT)", args)
	}

	// backbench itself, built from this repository, takes the arguments:
	// with the target replaced by a Unix socket that does not exist, it
	// exits 1 (unreachable) at once, where a bad command line exits 2.
	bin := filepath.Join(t.TempDir(), "backbench")
	if out, err := exec.Command("go", "build", "-C", "../..", "-o", bin, "./cmd/backbench").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	missing := filepath.Join(t.TempDir(), "none.sock")
	cmd := exec.Command(bin, append(args, "--unix-socket", missing)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), missing) {
		t.Errorf("backbench %q: %v, stderr %q; want exit 1 for the missing socket", args, err, stderr.String())
	}
}
