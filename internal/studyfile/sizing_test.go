package studyfile

import (
	"testing"
	"time"
)

// TestSizingKeys reads a capacity study's own keys: the factor's setting,
// the confirmation's length and the memory budget.
func TestSizingKeys(t *testing.T) {
	s, err := Parse("sizing.yaml", []byte(`question: How many children?
factors:
  transport: [tcp, unix]
  workers: {levels: [2, 4, 8], setting: pm.max_children}
backends:
  - name: pool
    command: [backbench, serve, --processes, "{workers}", --listen, "{listen}"]
    url: "http://{target}/"
measure:
  kind: capacity
  slo: ["p99<=100ms"]
  duration: 2s
  confirm: 10s
  memory: 2GiB
`))
	if err != nil {
		t.Fatal(err)
	}
	f := s.SizingFactor()
	if f == nil || f.Name != "workers" || f.Setting != "pm.max_children" {
		t.Errorf("sizing factor %+v", f)
	}
	if m := s.Measure; m.Confirm != 10*time.Second || m.Memory != 2<<30 {
		t.Errorf("confirm %v, memory %d", m.Confirm, m.Memory)
	}
}

// TestSizingStudies parses the repository's sizing studies: each sizes
// its workers, under the backend's own name of the setting.
func TestSizingStudies(t *testing.T) {
	for file, setting := range map[string]string{"sizing-prefork.yaml": "--processes", "sizing-php-fpm.yaml": "pm.max_children",
		"sizing-prefork-models.yaml": "--processes", "sizing-gunicorn.yaml": "--workers", "sizing-puma.yaml": "--workers", "sizing-starman.yaml": "--workers"} {
		s, err := Load("../../studies/" + file)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if f := s.SizingFactor(); s.Measure.Kind != MeasureCapacity || f == nil || f.Name != "workers" || f.Setting != setting || s.Measure.Memory != 2<<30 {
			t.Errorf("%s: kind %s, factor %+v, memory %d", file, s.Measure.Kind, f, s.Measure.Memory)
		}
	}
}
