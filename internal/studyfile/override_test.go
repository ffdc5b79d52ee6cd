package studyfile

import (
	"reflect"
	"testing"
	"time"
)

func TestMeasureOverride(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	dur := func(d time.Duration) *time.Duration { return &d }
	num := func(n int) *int { return &n }
	str := func(s string) *string { return &s }
	sweep := Measure{Kind: MeasureSweep, Levels: []int{1, 8, 64, 256}, Requests: 10000, Repeat: 5, Warmup: 500}
	bench := Measure{Kind: MeasureBench, Levels: []int{8}, Duration: 30 * time.Second, Repeat: 5}
	capac := Measure{Kind: MeasureCapacity, Levels: []int{64}, Duration: 10 * time.Second, Repeat: 3, Confirm: 30 * time.Second}
	tests := []struct {
		name    string
		m       Measure
		o       Overrides
		want    Measure
		wantErr string
	}{
		{"nothing", sweep, Overrides{}, sweep, ""},
		{"until decided", bench, Overrides{Until: str("decided"), Budget: dur(10 * time.Minute), MaxRepeat: num(30)},
			Measure{Kind: MeasureBench, Levels: []int{8}, Duration: 30 * time.Second, Repeat: 5, Until: UntilDecided, Budget: 10 * time.Minute, MaxRepeat: 30}, ""},
		{"until off", Measure{Kind: MeasureBench, Levels: []int{8}, Duration: 30 * time.Second, Repeat: 5, Until: UntilDecided, Budget: time.Minute}, Overrides{Until: str("")}, bench, ""},
		{"until what", bench, Overrides{Until: str("done")}, Measure{}, `--until "done": want decided`},
		{"budget without until", bench, Overrides{Budget: dur(time.Minute)}, Measure{}, "--budget and --max-repeat: only with --until decided"},
		{"budget 0", bench, Overrides{Until: str("decided"), Budget: dur(0)}, Measure{}, "--budget: want a positive time"},
		{"max-repeat 3", bench, Overrides{Until: str("decided"), MaxRepeat: num(3)}, Measure{}, "--max-repeat 3: want 4 to 100 rounds"},
		{"capacity until", capac, Overrides{Until: str("decided")}, Measure{}, "--until, --budget, --max-repeat: a capacity study"},
		{"quick sweep", sweep, Overrides{Quick: true},
			Measure{Kind: MeasureSweep, Levels: []int{1, 8}, Requests: 100, Repeat: 2}, ""},
		{"quick keeps -n", sweep, Overrides{Quick: true, Requests: i64(50)},
			Measure{Kind: MeasureSweep, Levels: []int{1, 8}, Requests: 50, Repeat: 2}, ""},
		{"quick raises the requests to the top level", Measure{Kind: MeasureSweep, Levels: []int{200, 400}, Requests: 1000}, Overrides{Quick: true},
			Measure{Kind: MeasureSweep, Levels: []int{200, 400}, Requests: 400, Repeat: 2}, ""},
		{"levels", sweep, Overrides{Levels: "1,4"},
			Measure{Kind: MeasureSweep, Levels: []int{1, 4}, Requests: 10000, Repeat: 5, Warmup: 500}, ""},
		{"bad levels", sweep, Overrides{Levels: "x"}, Measure{}, "-c x: "},
		{"bench takes one level", bench, Overrides{Levels: "1,4"}, Measure{}, "-c 1,4: a bench study takes one level"},
		{"-t alone", sweep, Overrides{Duration: dur(time.Second)},
			Measure{Kind: MeasureSweep, Levels: []int{1, 8, 64, 256}, Duration: time.Second, Repeat: 5, Warmup: 500}, ""},
		{"-n 0", sweep, Overrides{Requests: i64(0)}, Measure{}, "-n and -t: want a positive request count or time"},
		{"repeat 0", sweep, Overrides{Repeat: num(0)}, Measure{}, "--repeat 0: want 1 to 100 trials"},
		{"warmup -1", bench, Overrides{Warmup: i64(-1)}, Measure{}, "--warmup -1: want 0 or more"},
		{"level above requests", sweep, Overrides{Requests: i64(100)}, Measure{}, "the highest level (256) is above the requests per level (100)"},
		{"confirm outside capacity", sweep, Overrides{Confirm: dur(0)}, Measure{}, "--confirm: only a capacity study (measure kind capacity) takes it, not a sweep"},
		{"memory outside capacity", bench, Overrides{Memory: str("1GiB")}, Measure{}, "--memory: only a capacity study (measure kind capacity) takes it, not a bench"},
		{"quick capacity", capac, Overrides{Quick: true},
			Measure{Kind: MeasureCapacity, Levels: []int{64}, Duration: time.Second, Repeat: 1, Confirm: 2 * time.Second}, ""},
		{"capacity -n", capac, Overrides{Requests: i64(10)}, Measure{}, "-n: a capacity study's steps are timed: give -t"},
		{"capacity one level", capac, Overrides{Levels: "1,2"}, Measure{}, "-c 1,2: a capacity study takes one level (the most requests in flight)"},
		{"capacity -t 0", capac, Overrides{Duration: dur(0)}, Measure{}, "-t: want a positive step length"},
		{"capacity no confirmation", capac, Overrides{Confirm: dur(0), Memory: str("512MiB"), Levels: "16"},
			Measure{Kind: MeasureCapacity, Levels: []int{16}, Duration: 10 * time.Second, Repeat: 3, Confirm: -1, Memory: 512 << 20}, ""},
		{"capacity bad confirm", capac, Overrides{Confirm: dur(-time.Second)}, Measure{}, "--confirm: want 0 or more"},
		{"capacity bad memory", capac, Overrides{Memory: str("lots")}, Measure{}, "--memory: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			m.Levels = append([]int(nil), tc.m.Levels...)
			err := m.Override(tc.o)
			if tc.wantErr != "" {
				if err == nil || len(err.Error()) < len(tc.wantErr) || err.Error()[:len(tc.wantErr)] != tc.wantErr {
					t.Fatalf("err = %v, want %q...", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, tc.want) {
				t.Errorf("got %+v\nwant %+v", m, tc.want)
			}
		})
	}
}

// TestUntilRounds: the first rounds of a study run until decided are its
// repeat, at least trials.DefaultMinRounds and at most its max_repeat
// (20 when not given).
func TestUntilRounds(t *testing.T) {
	for _, c := range []struct{ repeat, most, first, wantMost int }{
		{1, 0, 4, 20}, {5, 0, 5, 20}, {8, 6, 6, 6}, {2, 10, 4, 10},
	} {
		m := Measure{Repeat: c.repeat, MaxRepeat: c.most, Until: UntilDecided}
		if first, most := m.UntilRounds(); first != c.first || most != c.wantMost {
			t.Errorf("repeat %d, max_repeat %d: %d, %d; want %d, %d", c.repeat, c.most, first, most, c.first, c.wantMost)
		}
	}
}

// TestParseUntil: until, budget (the commands' time grammar) and
// max_repeat are read into the measure.
func TestParseUntil(t *testing.T) {
	s, err := Parse("until.yaml", []byte(`question: Which is slower?
factors:
  delay: [10ms, 12ms]
backends:
  - name: model
    command: [backbench, serve, --protocol, http, --delay, "{delay}", --listen, "{listen}"]
    url: "http://{target}/"
measure:
  kind: bench
  concurrency: 1
  requests: 30
  until: decided
  budget: 2m30s
  max_repeat: 30
`))
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Measure; m.Until != UntilDecided || m.Budget != 150*time.Second || m.MaxRepeat != 30 || m.Repeat != 1 {
		t.Errorf("measure %+v", m)
	}
}
