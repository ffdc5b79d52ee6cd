package fcgi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/backbench/backbench/sockets"
)

// MaxFetchBody bounds the body that Fetch keeps, in bytes: 1 MiB.
const MaxFetchBody = 1 << 20

// Fetch sends one request made from cfg on a fresh connection (without
// FCGI_KEEP_CONN) and returns the CGI status and the body (at most
// MaxFetchBody bytes). It is for side requests, such as php-fpm's status
// page, not for load. cfg.Timeout bounds the whole exchange.
func Fetch(ctx context.Context, cfg Config) (int, []byte, error) {
	cfg.KeepAlive = false
	conn, err := sockets.SendOnce(ctx, cfg.Dialer, cfg.Target, cfg.Timeout, EncodeRequest(cfg), "fcgi")
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	buf := make([]byte, MaxContent+MaxPadding)
	var out []byte
	for {
		h, content, err := ReadRecord(br, buf)
		if err != nil {
			return 0, nil, fmt.Errorf("fcgi: read: %s", sockets.Describe(err))
		}
		if h.Version != Version1 || h.ID != 1 {
			return 0, nil, errors.New("fcgi: malformed response")
		}
		switch h.Type {
		case TypeStdout:
			if len(out)+len(content) > MaxFetchBody+64<<10 {
				return 0, nil, errors.New("fcgi: response too large")
			}
			out = append(out, content...)
		case TypeStderr:
		case TypeEndRequest:
			if _, ps, err := ParseEndRequest(content); err != nil || ps != StatusRequestComplete {
				return 0, nil, fmt.Errorf("fcgi: request refused (%v)", ps)
			}
			end, body, _ := FindHeaderEnd(out, 0)
			if end < 0 {
				return 0, nil, errors.New("fcgi: no CGI header block in the response")
			}
			status, _, err := ParseCGIHead(out[:end])
			if err != nil {
				return 0, nil, err
			}
			return status, out[body:min(len(out), body+MaxFetchBody)], nil
		default:
			return 0, nil, fmt.Errorf("fcgi: unexpected %s record", h.Type)
		}
	}
}

// ParseFPMStatus reads php-fpm's plain-text status page ("pool: www",
// "listen queue: 0", ...) into a map of field name to value.
func ParseFPMStatus(body []byte) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(string(body), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m
}
