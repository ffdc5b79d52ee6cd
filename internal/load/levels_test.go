package load

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseLevels(t *testing.T) {
	study := []int{1}
	for v := 11; v < 500; v += 10 {
		study = append(study, v)
	}
	study = append(study, 500)
	for _, tc := range []struct {
		spec string
		want []int
		err  string
	}{
		{spec: "1:500:10", want: study},
		{spec: "1,2,4,8,16", want: []int{1, 2, 4, 8, 16}},
		{spec: " 1 , 2 ,3", want: []int{1, 2, 3}},
		{spec: "8", want: []int{8}},
		{spec: "1:21:10", want: []int{1, 11, 21}},
		{spec: "5:5:1", want: []int{5}},
		{spec: "1:4:1", want: []int{1, 2, 3, 4}},
		{spec: "1:10:100", want: []int{1, 10}},
		{spec: "1,2,10:30:10,64", want: []int{1, 2, 10, 20, 30, 64}},
		{spec: "1000000", want: []int{1000000}},
		{spec: "", err: "empty"},
		{spec: "  ", err: "empty"},
		{spec: "0", err: "bad level"},
		{spec: "-1", err: "bad level"},
		{spec: "1000001", err: "bad level"},
		{spec: "x", err: "bad level"},
		{spec: "1,,2", err: "bad level"},
		{spec: "1,", err: "bad level"},
		{spec: "4,2", err: "must increase"},
		{spec: "2,2", err: "must increase"},
		{spec: "1:10:5,10", err: "must increase"},
		{spec: "10:1:1", err: "ends before"},
		{spec: "1:10", err: "bad item"},
		{spec: "1:10:1:1", err: "bad item"},
		{spec: "1:10:0", err: "bad step"},
		{spec: "1:100000:1,100001:200000:1", err: "more than"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := ParseLevels(tc.spec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
			back, err := ParseLevels(FormatLevels(got))
			if err != nil || !reflect.DeepEqual(back, got) {
				t.Fatalf("round trip: %v, %v", back, err)
			}
		})
	}
}

// FuzzParseLevels checks the invariants of every accepted spec: 1 to
// MaxLevels levels, strictly increasing, within 1..MaxLevel, and a round
// trip through FormatLevels; and that no input panics.
func FuzzParseLevels(f *testing.F) {
	for _, s := range []string{"1:500:10", "1,2,4,8,16", "8", "1:21:10", "5:5:1", "1,2,10:30:10,64",
		"", "0", "4,2", "10:1:1", "1:10", "1:10:0", "1:1000000:1", " 3 ", "1:9223372036854775807:1", "+1,0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		levels, err := ParseLevels(spec)
		if err != nil {
			if levels != nil {
				t.Fatalf("levels %v with error %v", levels, err)
			}
			return
		}
		if len(levels) < 1 || len(levels) > MaxLevels {
			t.Fatalf("%q: %d levels", spec, len(levels))
		}
		for i, v := range levels {
			if v < 1 || v > MaxLevel || (i > 0 && v <= levels[i-1]) {
				t.Fatalf("%q: bad levels %v", spec, levels)
			}
		}
		back, err := ParseLevels(FormatLevels(levels))
		if err != nil || !reflect.DeepEqual(back, levels) {
			t.Fatalf("%q: round trip gave %v, %v", spec, back, err)
		}
	})
}
