package plan

import (
	"bytes"
	"strings"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/stats"
	tfile "github.com/backbench/backbench/internal/targets"
	"github.com/backbench/backbench/sockets"
)

// mix reads --targets or --access-log into the plan's mix: every
// target's request (its URL resolved against the command line's target,
// the command line's headers merged under its own) and the schedule of
// their weights (of the log's order for a log).
func (o *Options) mix(r *execute.Plan) error {
	switch {
	case o.Targets != "" && o.AccessLog != "":
		return errorf("--targets and --access-log: give one")
	case o.AccessLog == "" && (o.LogFormat != "" || o.ReplayMethods != ""):
		return errorf("--log-format and --replay-methods read an access log: add --access-log FILE")
	case o.PostFile != "" || o.PutFile != "":
		return errorf("--targets gives the requests and their bodies (@path lines): drop -p and -u")
	case o.Head || o.Method != "":
		return errorf("--targets gives each request's method: drop -i and -m")
	case o.ContentType != "":
		return errorf("--targets gives each request's Content-Type as a header line: drop -T")
	}
	var ts []tfile.Target
	var err error
	if o.AccessLog != "" {
		return o.replay(r)
	}
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
	return o.variants(r, name, ts)
}

// replay reads --access-log into the plan's mix: its distinct requests,
// sent in the log's order, and what was skipped of it.
func (o *Options) replay(r *execute.Plan) error {
	var methods []string
	if o.ReplayMethods != "" {
		var err error
		if methods, err = tfile.ParseMethods(o.ReplayMethods); err != nil {
			return errorf("--replay-methods: %v", err)
		}
	}
	var lg *tfile.Log
	var err error
	name := o.AccessLog
	if name == "-" {
		if o.Stdin == nil {
			return errorf("--access-log -: no standard input")
		}
		b, rerr := o.Stdin()
		if rerr != nil {
			return errorf("--access-log -: cannot read standard input: %v", rerr)
		}
		name = "stdin"
		lg, err = tfile.ParseLog(bytes.NewReader(b), name, o.LogFormat, methods)
	} else {
		lg, err = tfile.ReadLog(name, nil, o.LogFormat, methods)
	}
	if err != nil {
		return errorf("%v", err)
	}
	r.Schedule = lg.Order
	format := o.LogFormat
	if format == "" {
		format = "combined"
	}
	r.Replay = &stats.Replay{File: name, Format: format, Methods: methods, Lines: lg.Lines, Replayed: lg.Replayed,
		Skipped: lg.Skipped, Malformed: lg.Malformed, FirstBadLine: lg.FirstBad, FirstBadWhy: lg.FirstBadWhy, Truncated: lg.Truncated}
	if len(methods) == 0 {
		r.Replay.Methods = tfile.DefaultMethods
	}
	return o.variants(r, name, lg.Targets)
}

// variants makes the requests of the targets ts read from name.
func (o *Options) variants(r *execute.Plan, name string, ts []tfile.Target) error {
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
