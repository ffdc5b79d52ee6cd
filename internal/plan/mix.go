package plan

import (
	"bytes"
	"strings"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/protocol"
	tfile "github.com/backbench/backbench/internal/targets"
	"github.com/backbench/backbench/sockets"
)

// mix reads --targets into the plan's mix: every target's request (its
// URL resolved against the command line's target, the command line's
// headers merged under its own) and the schedule of their weights.
func (o *Options) mix(r *execute.Plan) error {
	switch {
	case o.PostFile != "" || o.PutFile != "":
		return errorf("--targets gives the requests and their bodies (@path lines): drop -p and -u")
	case o.Head || o.Method != "":
		return errorf("--targets gives each request's method: drop -i and -m")
	case o.ContentType != "":
		return errorf("--targets gives each request's Content-Type as a header line: drop -T")
	}
	var ts []tfile.Target
	var err error
	if o.Targets == "-" {
		if o.Stdin == nil {
			return errorf("--targets -: no standard input")
		}
		b, rerr := o.Stdin()
		if rerr != nil {
			return errorf("--targets -: cannot read standard input: %v", rerr)
		}
		ts, err = tfile.Parse(bytes.NewReader(b), "stdin", ".")
	} else {
		ts, err = tfile.ReadFile(o.Targets, nil)
	}
	if err != nil {
		return errorf("%v", err)
	}
	name := o.Targets
	if name == "-" {
		name = "stdin"
	}
	if r.Schedule, err = tfile.Schedule(tfile.Weights(ts)); err != nil {
		return errorf("%s: %v", name, err)
	}
	r.Mix, r.Labels, r.Weights = make([]protocol.Variant, len(ts)), make([]string, len(ts)), tfile.Weights(ts)
	for i, t := range ts {
		v := protocol.Variant{Method: t.Method, Body: t.Body}
		uri := t.URL
		if !strings.HasPrefix(uri, "/") {
			u, perr := sockets.ParseTarget(uri)
			if perr != nil {
				return errorf("%s:%d: %v", name, t.Line, perr)
			}
			if u.Scheme != r.Target.Scheme || u.Host != r.Target.Host || u.Port != r.Target.Port {
				return errorf("%s:%d: %s is not on the command line's target %s: a targets file may only name its paths",
					name, t.Line, uri, r.Target.URL)
			}
			uri = u.RequestURI()
		}
		if strings.ContainsAny(uri, "#\x00") {
			return errorf("%s:%d: bad path %q", name, t.Line, uri)
		}
		v.Path, v.RawQuery, _ = strings.Cut(uri, "?")
		v.Headers = mergeHeaders(r.Headers, t.Headers)
		if t.Body != nil {
			v.ContentType = "text/plain"
		}
		r.Mix[i], r.Labels[i] = v, t.Label()
	}
	return nil
}

// mergeHeaders returns the command line's headers with a target's own
// after them; a target's header replaces one of the same name.
func mergeHeaders(base, own [][2]string) [][2]string {
	out := make([][2]string, 0, len(base)+len(own))
	for _, h := range base {
		replaced := false
		for _, o := range own {
			if strings.EqualFold(o[0], h[0]) {
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, h)
		}
	}
	return append(out, own...)
}
