package main

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// repoFile reads a file of the repository from cmd/backbench.
func repoFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDockerfile checks the container recipe without a Docker engine: its
// last stage is an empty image holding the binary alone, started without a
// shell, and its build command, run here as written, makes a static
// binary (no interpreter, no shared library) that runs.
func TestDockerfile(t *testing.T) {
	onceAcrossEngines(t)
	df := string(repoFile(t, "Dockerfile"))
	stages := regexp.MustCompile(`(?m)^FROM `).Split(df, -1)
	last := stages[len(stages)-1]
	if !strings.HasPrefix(last, "scratch") || strings.Contains(last, "\nRUN ") {
		t.Errorf("the last stage is not FROM scratch without RUN:\n%s", last)
	}
	if !regexp.MustCompile(`(?m)^ENTRYPOINT \["/backbench"\]$`).MatchString(last) {
		t.Errorf("want ENTRYPOINT [\"/backbench\"] (exec form: no shell)")
	}
	if dockerBuild.FindStringSubmatch(df) == nil {
		t.Fatalf("no 'RUN CGO_ENABLED=0 go build ... -o /out/backbench ./cmd/backbench' line")
	}
	if testing.Short() {
		t.Skip("-short: not building the static binary")
	}
	bin := staticBinary(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is dynamically linked (%v)", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs %v", libs)
	}
	out, err := exec.CommandContext(context.Background(), bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "backbench") {
		t.Errorf("the static binary's version: %v %s", err, out)
	}
}

// dockerBuild is the Dockerfile's build line: its go build command and
// the package.
var dockerBuild = regexp.MustCompile(`(?m)^RUN CGO_ENABLED=0 (go build .*) -o /out/backbench (\./cmd/backbench)$`)

// static is the Dockerfile's binary, built once for the package's tests.
var static struct {
	once sync.Once
	path string
	err  error
}

// staticBinary builds backbench once as the Dockerfile does (its go build
// line, without cgo) into the shared binary's directory, and returns its
// path: the image's binary (TestDockerfile), and one whose address space
// holds no glibc malloc arenas (the merge memory tests).
func staticBinary(t *testing.T) string {
	t.Helper()
	dir := filepath.Dir(sharedBinary(t))
	df := string(repoFile(t, "Dockerfile"))
	static.once.Do(func() {
		m := dockerBuild.FindStringSubmatch(df)
		if m == nil {
			static.err = fmt.Errorf("no 'RUN CGO_ENABLED=0 go build ... -o /out/backbench ./cmd/backbench' line in the Dockerfile")
			return
		}
		static.path = filepath.Join(dir, "backbench-static")
		args := append(strings.Fields(m[1]), "-o", static.path, m[2])
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			static.err = fmt.Errorf("%q: %v\n%s", args, err, out)
		}
	})
	if static.err != nil {
		t.Fatal(static.err)
	}
	return static.path
}
