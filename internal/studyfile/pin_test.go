package studyfile

import (
	"slices"
	"strings"
	"testing"
)

// pinStudy is a study of two backends with the measure's extra lines.
func pinStudy(backendExtra, measureExtra string) string {
	return `question: Pinned?
factors:
  workers: [2, 4]
backends:
  - name: a
    when: {workers: 2}
    command: [backbench, serve, --processes, "{workers}", --listen, "{listen}"]
    url: fcgi://{target}/
` + backendExtra + `
  - name: b
    when: {workers: 4}
    command: [backbench, serve, --processes, "{workers}", --listen, "{listen}"]
    url: fcgi://{target}/
measure:
  kind: bench
  concurrency: 4
  requests: 100
` + measureExtra + "\n"
}

// withMachine runs f as if the machine had cpus.
func withMachine(t *testing.T, cpus []int) {
	t.Helper()
	old := machineCPUs
	machineCPUs = func() []int { return cpus }
	t.Cleanup(func() { machineCPUs = old })
}

func TestPinKeys(t *testing.T) {
	withMachine(t, []int{0, 1, 2, 3})
	for _, c := range []struct {
		name          string
		backend, meas string
		client, a, b  []int
		note          string
	}{
		{name: "none"},
		{name: "explicit", backend: `    cpus: "1-2"`, meas: `  client_cpus: 0`, client: []int{0}, a: []int{1, 2}},
		{name: "number", backend: `    cpus: 3`, a: []int{3}},
		{name: "list", backend: `    cpus: 0,2`, a: []int{0, 2}},
		{name: "auto", meas: `  pin: auto`, client: []int{0, 1}, a: []int{2, 3}, b: []int{2, 3}},
		{name: "auto keeps the file's", backend: `    cpus: "3"`, meas: "  pin: auto\n  client_cpus: 0", client: []int{0}, a: []int{3}, b: []int{2, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("pin.yaml", []byte(pinStudy(c.backend, c.meas)))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Measure.ClientCPUs; !slices.Equal(got, c.client) {
				t.Errorf("client CPUs %v, want %v", got, c.client)
			}
			if got := s.Backends[0].CPUs; !slices.Equal(got, c.a) {
				t.Errorf("backend a CPUs %v, want %v", got, c.a)
			}
			if got := s.Backends[1].CPUs; !slices.Equal(got, c.b) {
				t.Errorf("backend b CPUs %v, want %v", got, c.b)
			}
			if s.Measure.PinNote != "" {
				t.Errorf("note %q", s.Measure.PinNote)
			}
		})
	}
}

func TestPinAutoOneCPU(t *testing.T) {
	withMachine(t, []int{0})
	s, err := Parse("pin.yaml", []byte(pinStudy("", "  pin: auto")))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Measure.ClientCPUs) > 0 || len(s.Backends[0].CPUs) > 0 {
		t.Errorf("pinned on one CPU: client %v, backend %v", s.Measure.ClientCPUs, s.Backends[0].CPUs)
	}
	if !strings.Contains(s.Measure.PinNote, "this machine has 1 CPU") {
		t.Errorf("note %q", s.Measure.PinNote)
	}
	_, err = Parse("pin.yaml", []byte(pinStudy(`    cpus: "1"`, "")))
	if err == nil || !strings.Contains(err.Error(), `pin.yaml:9:11: backend "a" cpus "1": this machine has no CPU 1 (its CPUs: 0)`) {
		t.Errorf("CPU 1 on a machine of 1: %v", err)
	}
}
