package load

import (
	"slices"
	"strings"
	"testing"
)

func TestParseCPUs(t *testing.T) {
	good := []struct {
		in   string
		want []int
		back string
	}{
		{"0", []int{0}, "0"},
		{" 1 ", []int{1}, "1"},
		{"0-1", []int{0, 1}, "0-1"},
		{"0,2", []int{0, 2}, "0,2"},
		{"3,0-1,1", []int{0, 1, 3}, "0-1,3"},
		{"0-3,6\n", []int{0, 1, 2, 3, 6}, "0-3,6"},
		{"5-5", []int{5}, "5"},
	}
	for _, c := range good {
		got, err := ParseCPUs(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseCPUs(%q) = %v, %v; want %v", c.in, got, err, c.want)
			continue
		}
		if b := FormatCPUs(got); b != c.back {
			t.Errorf("FormatCPUs(%v) = %q, want %q", got, b, c.back)
		}
	}
	bad := map[string]string{
		"":      "want a CPU list",
		"a":     "want CPU numbers",
		"-1":    "want CPU numbers",
		"1-":    "want CPU numbers",
		"0,,1":  "want CPU numbers",
		"3-1":   "a range goes up",
		"2000":  "above 1023",
		"0-x":   "want CPU numbers",
		"+1":    "want CPU numbers",
		"0 1":   "want CPU numbers",
		"1-2-3": "want CPU numbers",
	}
	for in, want := range bad {
		if got, err := ParseCPUs(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCPUs(%q) = %v, %v; want an error with %q", in, got, err, want)
		}
	}
}

func TestCheckCPUs(t *testing.T) {
	have := []int{0, 1, 2, 3}
	if err := CheckCPUs([]int{0, 3}, have); err != nil {
		t.Errorf("CheckCPUs: %v", err)
	}
	if err := CheckCPUs([]int{4}, have); err == nil || err.Error() != "this machine has no CPU 4 (its CPUs: 0-3)" {
		t.Errorf("CheckCPUs(4) = %v", err)
	}
	if err := CheckCPUs([]int{1, 5, 6}, have); err == nil || err.Error() != "this machine has no CPUs 5-6 (its CPUs: 0-3)" {
		t.Errorf("CheckCPUs(1,5,6) = %v", err)
	}
	if m := MachineCPUs(); len(m) == 0 {
		t.Errorf("MachineCPUs is empty")
	}
}

func TestSplitCPUs(t *testing.T) {
	for _, c := range []struct{ in, client, backends []int }{
		{[]int{0}, nil, nil},
		{nil, nil, nil},
		{[]int{0, 1}, []int{0}, []int{1}},
		{[]int{0, 1, 2}, []int{0}, []int{1, 2}},
		{[]int{0, 1, 2, 3}, []int{0, 1}, []int{2, 3}},
		{[]int{2, 5, 7, 8, 9}, []int{2, 5}, []int{7, 8, 9}},
	} {
		cl, be := SplitCPUs(c.in)
		if !slices.Equal(cl, c.client) || !slices.Equal(be, c.backends) {
			t.Errorf("SplitCPUs(%v) = %v, %v; want %v, %v", c.in, cl, be, c.client, c.backends)
		}
	}
}

func FuzzParseCPUs(f *testing.F) {
	for _, s := range []string{"0", "0-1", "0,2", "3-1", "1023", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUs(s)
		if err != nil {
			return
		}
		again, err := ParseCPUs(FormatCPUs(cpus))
		if err != nil || !slices.Equal(again, cpus) {
			t.Fatalf("%q: %v round-trips to %v, %v", s, cpus, again, err)
		}
	})
}
