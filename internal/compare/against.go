package compare

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/gate"
)

// Against compares the run d, named name, with the saved baseline base as
// compare compares two files (Files): d is taken as it would be saved,
// written and read back, so that a run and its saved file compare alike.
// With rules (--fail-on) the comparisons are judged (Judge). Nothing to
// pair is an error.
func Against(base *File, name string, d document.Result, noise float64, rules []gate.Rule) (*document.Comparison, error) {
	var b bytes.Buffer
	if err := document.Write(&b, d); err != nil {
		return nil, err
	}
	f, err := Read(name, b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("the run read back as saved: %v", err)
	}
	res, err := Files([]*File{base, f}, noise, false)
	if err != nil {
		return nil, err
	}
	Judge(res, rules)
	return res, nil
}

// Judge judges the comparisons of res by the gate's rules (--fail-on)
// and keeps the judgement in res.Gate; without rules there is no gate.
func Judge(res *document.Comparison, rules []gate.Rule) {
	if rules == nil {
		return
	}
	g := gate.Judge(rules, append(slices.Clone(res.Comparisons), res.TargetComparisons...))
	res.Gate = &g
}
