package studyfile

import (
	"strings"
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

// TestParseSize reads sizes and refuses what is not one.
func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"2GiB": 2 << 30, "2G": 2 << 30, "512MiB": 512 << 20, "1.5GB": 1.5e9,
		"1000": 1000, " 64 kib ": 64 << 10, "3TB": 3e12} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1GiB", "2 lots", "0", "1e400", "NaN", "2GiBs", "99999999TiB"} {
		if got, err := ParseSize(in); err == nil || !strings.Contains(err.Error(), "want a size") {
			t.Errorf("ParseSize(%q) = %d, %v; want an error", in, got, err)
		}
	}
}

// TestSizingStudies parses the repository's sizing studies: each sizes
// its workers, under the backend's own name of the setting.
func TestSizingStudies(t *testing.T) {
	for file, setting := range map[string]string{"sizing-prefork.yaml": "--processes", "sizing-php-fpm.yaml": "pm.max_children",
		"sizing-prefork-models.yaml": "--processes", "sizing-gunicorn.yaml": "--workers", "sizing-puma.yaml": "--workers"} {
		s, err := Load("../../../studies/" + file)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if f := s.SizingFactor(); s.Measure.Kind != MeasureCapacity || f == nil || f.Name != "workers" || f.Setting != setting || s.Measure.Memory != 2<<30 {
			t.Errorf("%s: kind %s, factor %+v, memory %d", file, s.Measure.Kind, f, s.Measure.Memory)
		}
	}
}
