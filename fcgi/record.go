// Package fcgi is the FastCGI 1.0 client side of backbench: the record codec
// and name-value pairs of the specification, the CGI/1.1 parameters a web
// server front end sends, and a load Client that sends one pre-encoded
// Responder request per Do over a connection it owns, with or without
// FCGI_KEEP_CONN.
//
// The codec follows the FastCGI 1.0 specification
// (https://fastcgi-archives.github.io/FastCGI_Specification.html):
// 8-byte record headers, streams closed by an empty record, padding to a
// multiple of 8, and name-value lengths of 1 or 4 bytes.
//
// Limits: the client sends one request at a time on a connection (request id
// 1, no multiplexing), only in the Responder role, and never sends management
// records on load connections. Response bodies are counted and discarded.
package fcgi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Version1 is the only FastCGI protocol version (spec section 8).
const Version1 = 1

// HeaderLen is the size of a record header, in bytes.
const HeaderLen = 8

// MaxContent is the largest content of one record, in bytes.
const MaxContent = 65535

// MaxPadding is the largest padding of one record, in bytes.
const MaxPadding = 255

// MaxRecord is the largest record on the wire (header, content and
// padding), in bytes.
const MaxRecord = HeaderLen + MaxContent + MaxPadding

// ChunkSize is the content size, in bytes, at which AppendRecord splits a
// stream: the largest multiple of 8 that fits a record, so that a full record
// needs no padding (php-fpm writes STDOUT in records of this size too).
const ChunkSize = 65528

// NullRequestID is the request id of management records (FCGI_NULL_REQUEST_ID).
const NullRequestID = 0

// RecType is a record type (spec section 8, FCGI_BEGIN_REQUEST and on).
type RecType uint8

// The record types of FastCGI 1.0.
const (
	TypeBeginRequest    RecType = 1
	TypeAbortRequest    RecType = 2
	TypeEndRequest      RecType = 3
	TypeParams          RecType = 4
	TypeStdin           RecType = 5
	TypeStdout          RecType = 6
	TypeStderr          RecType = 7
	TypeData            RecType = 8
	TypeGetValues       RecType = 9
	TypeGetValuesResult RecType = 10
	TypeUnknownType     RecType = 11
)

var typeNames = [...]string{"", "BEGIN_REQUEST", "ABORT_REQUEST", "END_REQUEST", "PARAMS",
	"STDIN", "STDOUT", "STDERR", "DATA", "GET_VALUES", "GET_VALUES_RESULT", "UNKNOWN_TYPE"}

// String returns the specification's name of the type without the FCGI_
// prefix ("STDOUT"), or "type N" for a type FastCGI 1.0 does not define.
func (t RecType) String() string {
	if t >= 1 && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "type " + strconv.Itoa(int(t))
}

// IsManagement reports whether t is a management record type, one that
// travels with request id 0 (spec section 3.3).
func (t RecType) IsManagement() bool {
	return t == TypeGetValues || t == TypeGetValuesResult || t == TypeUnknownType
}

// Roles of a BEGIN_REQUEST body (spec section 5.1).
const (
	RoleResponder  = 1
	RoleAuthorizer = 2
	RoleFilter     = 3
)

// FlagKeepConn is bit 0 of the BEGIN_REQUEST flags (FCGI_KEEP_CONN): the
// application keeps the connection open after the request.
const FlagKeepConn = 1

// ProtocolStatus is the protocolStatus of an END_REQUEST body (spec section
// 5.5).
type ProtocolStatus uint8

// The protocol statuses of FastCGI 1.0.
const (
	StatusRequestComplete ProtocolStatus = 0
	StatusCantMpxConn     ProtocolStatus = 1
	StatusOverloaded      ProtocolStatus = 2
	StatusUnknownRole     ProtocolStatus = 3
)

var statusNames = [...]string{"REQUEST_COMPLETE", "CANT_MPX_CONN", "OVERLOADED", "UNKNOWN_ROLE"}

// String returns the specification's name without the FCGI_ prefix
// ("CANT_MPX_CONN"), or "protocolStatus N" for an undefined value.
func (s ProtocolStatus) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "protocolStatus " + strconv.Itoa(int(s))
}

// Names of the variables of a GET_VALUES request (spec section 4.1).
const (
	VarMaxConns  = "FCGI_MAX_CONNS"
	VarMaxReqs   = "FCGI_MAX_REQS"
	VarMpxsConns = "FCGI_MPXS_CONNS"
)

// Header is a record header (spec section 3.3, FCGI_Header).
type Header struct {
	Version       uint8
	Type          RecType
	ID            uint16
	ContentLength uint16
	PaddingLength uint8
	Reserved      uint8
}

// Errors of the codec.
var (
	ErrShortHeader = errors.New("fcgi: record header shorter than 8 bytes")
	ErrShortBody   = errors.New("fcgi: record body too short")
	ErrPairs       = errors.New("fcgi: malformed name-value pair")
)

// ParseHeader decodes the first 8 bytes of b. It checks neither the version
// nor the type; the caller decides what it accepts.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, ErrShortHeader
	}
	return Header{
		Version:       b[0],
		Type:          RecType(b[1]),
		ID:            binary.BigEndian.Uint16(b[2:4]),
		ContentLength: binary.BigEndian.Uint16(b[4:6]),
		PaddingLength: b[6],
		Reserved:      b[7],
	}, nil
}

// ReadHeader reads and decodes one record header from r.
func ReadHeader(r io.Reader) (Header, error) {
	var b [HeaderLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return Header{}, err
	}
	return ParseHeader(b[:])
}

// ReadRecord reads one whole record from r into buf, which must hold at least
// MaxContent+MaxPadding bytes, and returns its header and its content (a
// slice of buf, padding removed). A record cut short gives
// io.ErrUnexpectedEOF; a clean EOF before the header gives io.EOF.
func ReadRecord(r io.Reader, buf []byte) (Header, []byte, error) {
	h, err := ReadHeader(r)
	if err != nil {
		return h, nil, err
	}
	n := int(h.ContentLength) + int(h.PaddingLength)
	if len(buf) < n {
		return h, nil, fmt.Errorf("fcgi: record of %d bytes does not fit a %d-byte buffer", n, len(buf))
	}
	if _, err := io.ReadFull(r, buf[:n]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return h, nil, err
	}
	return h, buf[:h.ContentLength], nil
}

// Padding returns the padding that brings n content bytes to a multiple of 8.
func Padding(n int) int { return -n & 7 }

// AppendHeader appends a record header with the given fields and version 1.
func AppendHeader(dst []byte, t RecType, id uint16, contentLen int, padLen int) []byte {
	return append(dst, Version1, byte(t), byte(id>>8), byte(id),
		byte(contentLen>>8), byte(contentLen), byte(padLen), 0)
}

var zeros [MaxPadding]byte

// AppendRecord appends content as records of type t for request id, each of
// at most ChunkSize content bytes and padded to a multiple of 8. An empty
// content gives one empty record, which ends a stream; AppendRecord never
// adds that end record to a non-empty content.
func AppendRecord(dst []byte, t RecType, id uint16, content []byte) []byte {
	for {
		n := min(len(content), ChunkSize)
		pad := Padding(n)
		dst = AppendHeader(dst, t, id, n, pad)
		dst = append(dst, content[:n]...)
		dst = append(dst, zeros[:pad]...)
		content = content[n:]
		if len(content) == 0 {
			return dst
		}
	}
}

// AppendBeginRequest appends a BEGIN_REQUEST record (spec section 5.1) for
// request id with the given role and flags (FlagKeepConn).
func AppendBeginRequest(dst []byte, id uint16, role uint16, flags uint8) []byte {
	dst = AppendHeader(dst, TypeBeginRequest, id, 8, 0)
	return append(dst, byte(role>>8), byte(role), flags, 0, 0, 0, 0, 0)
}

// ParseBeginRequest decodes a BEGIN_REQUEST body.
func ParseBeginRequest(content []byte) (role uint16, flags uint8, err error) {
	if len(content) < 8 {
		return 0, 0, ErrShortBody
	}
	return binary.BigEndian.Uint16(content), content[2], nil
}

// AppendEndRequest appends an END_REQUEST record (spec section 5.5).
func AppendEndRequest(dst []byte, id uint16, appStatus uint32, ps ProtocolStatus) []byte {
	dst = AppendHeader(dst, TypeEndRequest, id, 8, 0)
	return append(dst, byte(appStatus>>24), byte(appStatus>>16), byte(appStatus>>8), byte(appStatus),
		byte(ps), 0, 0, 0)
}

// ParseEndRequest decodes an END_REQUEST body.
func ParseEndRequest(content []byte) (appStatus uint32, ps ProtocolStatus, err error) {
	if len(content) < 8 {
		return 0, 0, ErrShortBody
	}
	return binary.BigEndian.Uint32(content), ProtocolStatus(content[4]), nil
}

// AppendUnknownType appends an UNKNOWN_TYPE management record (spec section
// 4.2) naming the record type t that was not understood.
func AppendUnknownType(dst []byte, t RecType) []byte {
	dst = AppendHeader(dst, TypeUnknownType, NullRequestID, 8, 0)
	return append(dst, byte(t), 0, 0, 0, 0, 0, 0, 0)
}

// AppendGetValues appends a GET_VALUES management record asking for names
// (each with an empty value).
func AppendGetValues(dst []byte, names ...string) []byte {
	var body []byte
	for _, n := range names {
		body = AppendPair(body, n, "")
	}
	return AppendRecord(dst, TypeGetValues, NullRequestID, body)
}

func appendLen(dst []byte, n int) []byte {
	if n <= 127 {
		return append(dst, byte(n))
	}
	return append(dst, byte(n>>24)|0x80, byte(n>>16), byte(n>>8), byte(n))
}

// AppendPair appends one name-value pair (spec section 3.4): each length in
// 1 byte when at most 127, else in 4 bytes big-endian with the high bit set.
// Names and values longer than 2^31-1 bytes cannot be encoded.
func AppendPair(dst []byte, name, value string) []byte {
	dst = appendLen(dst, len(name))
	dst = appendLen(dst, len(value))
	dst = append(dst, name...)
	return append(dst, value...)
}

// AppendPairs appends the pairs in order. The result is the content of a
// PARAMS (or GET_VALUES) stream, to be framed with AppendRecord.
func AppendPairs(dst []byte, pairs [][2]string) []byte {
	for _, p := range pairs {
		dst = AppendPair(dst, p[0], p[1])
	}
	return dst
}

func readLen(b []byte) (n int, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, b, false
	}
	if b[0]&0x80 == 0 {
		return int(b[0]), b[1:], true
	}
	if len(b) < 4 {
		return 0, b, false
	}
	return int(binary.BigEndian.Uint32(b) &^ (1 << 31)), b[4:], true
}

// NextPair decodes the first name-value pair of b and returns it with the
// rest of b; name and value are slices of b. It fails with ErrPairs when b
// holds only part of a pair. Since a pair may be split across records
// (spec section 3.4), decode the concatenated content of a stream, not each
// record apart.
func NextPair(b []byte) (name, value, rest []byte, err error) {
	nl, r, ok := readLen(b)
	if !ok {
		return nil, nil, b, ErrPairs
	}
	vl, r, ok := readLen(r)
	if !ok || nl > len(r) || vl > len(r)-nl {
		return nil, nil, b, ErrPairs
	}
	return r[:nl], r[nl : nl+vl], r[nl+vl:], nil
}

// ParsePairs decodes the concatenated content of a PARAMS, GET_VALUES or
// GET_VALUES_RESULT stream into pairs, in order.
func ParsePairs(b []byte) ([][2]string, error) {
	var out [][2]string
	total := len(b)
	for len(b) > 0 {
		name, value, rest, err := NextPair(b)
		if err != nil {
			return out, fmt.Errorf("%w at byte %d of %d", err, total-len(b), total)
		}
		out = append(out, [2]string{string(name), string(value)})
		b = rest
	}
	return out, nil
}
