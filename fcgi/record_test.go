package fcgi

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestAppendRecord(t *testing.T) {
	tests := []struct {
		name    string
		typ     RecType
		id      uint16
		content []byte
		want    []byte
	}{
		{"empty ends a stream", TypeStdin, 1, nil,
			[]byte{1, 5, 0, 1, 0, 0, 0, 0}},
		{"one byte padded to 8", TypeStdout, 1, []byte("a"),
			[]byte{1, 6, 0, 1, 0, 1, 7, 0, 'a', 0, 0, 0, 0, 0, 0, 0}},
		{"eight bytes no padding", TypeParams, 0x0102, []byte("abcdefgh"),
			[]byte{1, 4, 1, 2, 0, 8, 0, 0, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'}},
		{"nine bytes seven padding", TypeStderr, 65535, []byte("123456789"),
			[]byte{1, 7, 0xff, 0xff, 0, 9, 7, 0, '1', '2', '3', '4', '5', '6', '7', '8', '9', 0, 0, 0, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendRecord(nil, tt.typ, tt.id, tt.content)
			if !bytes.Equal(got, tt.want) {
				t.Errorf("AppendRecord = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAppendRecordSplits(t *testing.T) {
	tests := []struct {
		size    int
		records []int // content length of each record
	}{
		{ChunkSize, []int{ChunkSize}},
		{ChunkSize + 1, []int{ChunkSize, 1}},
		{MaxContent, []int{ChunkSize, MaxContent - ChunkSize}},
		{3*ChunkSize + 5, []int{ChunkSize, ChunkSize, ChunkSize, 5}},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.size), func(t *testing.T) {
			content := bytes.Repeat([]byte{'z'}, tt.size)
			b := AppendRecord(nil, TypeStdin, 7, content)
			var got []int
			var joined []byte
			r := bytes.NewReader(b)
			buf := make([]byte, MaxContent+MaxPadding)
			for r.Len() > 0 {
				h, c, err := ReadRecord(r, buf)
				if err != nil {
					t.Fatal(err)
				}
				if h.Type != TypeStdin || h.ID != 7 || h.Version != 1 {
					t.Fatalf("header %+v", h)
				}
				if (int(h.ContentLength)+int(h.PaddingLength))%8 != 0 {
					t.Errorf("record of %d+%d bytes is not a multiple of 8", h.ContentLength, h.PaddingLength)
				}
				got = append(got, len(c))
				joined = append(joined, c...)
			}
			if !reflect.DeepEqual(got, tt.records) {
				t.Errorf("records %v, want %v", got, tt.records)
			}
			if !bytes.Equal(joined, content) {
				t.Error("content changed by the round trip")
			}
		})
	}
}

func TestBeginEndRequest(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want []byte
	}{
		{"begin responder keep-conn", AppendBeginRequest(nil, 1, RoleResponder, FlagKeepConn),
			[]byte{1, 1, 0, 1, 0, 8, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0}},
		{"begin filter no flags id 258", AppendBeginRequest(nil, 258, RoleFilter, 0),
			[]byte{1, 1, 1, 2, 0, 8, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0}},
		{"end complete app status", AppendEndRequest(nil, 1, 0x01020304, StatusRequestComplete),
			[]byte{1, 3, 0, 1, 0, 8, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0}},
		{"end cant mpx", AppendEndRequest(nil, 2, 0, StatusCantMpxConn),
			[]byte{1, 3, 0, 2, 0, 8, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}},
		{"unknown type", AppendUnknownType(nil, 42),
			[]byte{1, 11, 0, 0, 0, 8, 0, 0, 42, 0, 0, 0, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Equal(tt.got, tt.want) {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
	role, flags, err := ParseBeginRequest([]byte{0, 2, 1, 0, 0, 0, 0, 0})
	if err != nil || role != RoleAuthorizer || flags != FlagKeepConn {
		t.Errorf("ParseBeginRequest = %d %d %v", role, flags, err)
	}
	app, ps, err := ParseEndRequest([]byte{0, 0, 1, 0, 3, 0, 0, 0})
	if err != nil || app != 256 || ps != StatusUnknownRole {
		t.Errorf("ParseEndRequest = %d %v %v", app, ps, err)
	}
	if _, _, err := ParseEndRequest([]byte{0, 0, 0}); !errors.Is(err, ErrShortBody) {
		t.Errorf("short END_REQUEST body: err %v", err)
	}
}

func TestNames(t *testing.T) {
	tests := []struct{ got, want string }{
		{TypeBeginRequest.String(), "BEGIN_REQUEST"},
		{TypeUnknownType.String(), "UNKNOWN_TYPE"},
		{RecType(0).String(), "type 0"},
		{RecType(12).String(), "type 12"},
		{StatusRequestComplete.String(), "REQUEST_COMPLETE"},
		{StatusCantMpxConn.String(), "CANT_MPX_CONN"},
		{StatusOverloaded.String(), "OVERLOADED"},
		{StatusUnknownRole.String(), "UNKNOWN_ROLE"},
		{ProtocolStatus(9).String(), "protocolStatus 9"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestReadHeader(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want Header
		err  error
	}{
		{"stdout", []byte{1, 6, 0, 1, 0x12, 0x34, 4, 9},
			Header{Version: 1, Type: TypeStdout, ID: 1, ContentLength: 0x1234, PaddingLength: 4, Reserved: 9}, nil},
		{"version 2 kept for caller", []byte{2, 3, 0xab, 0xcd, 0, 8, 0, 0},
			Header{Version: 2, Type: TypeEndRequest, ID: 0xabcd, ContentLength: 8}, nil},
		{"empty", nil, Header{}, io.EOF},
		{"short", []byte{1, 6, 0}, Header{}, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ReadHeader(bytes.NewReader(tt.in))
			if !errors.Is(err, tt.err) || h != tt.want {
				t.Errorf("ReadHeader = %+v, %v; want %+v, %v", h, err, tt.want, tt.err)
			}
		})
	}
	if _, err := ParseHeader(make([]byte, 7)); !errors.Is(err, ErrShortHeader) {
		t.Errorf("ParseHeader(7 bytes) err %v", err)
	}
}

func TestReadRecordCutShort(t *testing.T) {
	rec := AppendRecord(nil, TypeStdout, 1, []byte("hello"))
	buf := make([]byte, MaxContent+MaxPadding)
	for n := 9; n < len(rec); n++ {
		if _, _, err := ReadRecord(bytes.NewReader(rec[:n]), buf); err != io.ErrUnexpectedEOF {
			t.Fatalf("cut at %d: err %v, want unexpected EOF", n, err)
		}
	}
	if _, c, err := ReadRecord(bytes.NewReader(rec), buf); err != nil || string(c) != "hello" {
		t.Errorf("ReadRecord = %q, %v", c, err)
	}
	if _, _, err := ReadRecord(bytes.NewReader(rec), make([]byte, 4)); err == nil {
		t.Error("ReadRecord into a small buffer: no error")
	}
}

func TestPairs(t *testing.T) {
	long := strings.Repeat("v", 128)
	tests := []struct {
		name  string
		pairs [][2]string
		wire  []byte
	}{
		{"short", [][2]string{{"A", "bc"}}, []byte{1, 2, 'A', 'b', 'c'}},
		{"empty value", [][2]string{{"X", ""}}, []byte{1, 0, 'X'}},
		{"127 is one byte", [][2]string{{"N", long[:127]}},
			append([]byte{1, 127, 'N'}, long[:127]...)},
		{"128 is four bytes", [][2]string{{"N", long}},
			append([]byte{1, 0x80, 0, 0, 128, 'N'}, long...)},
		{"long name", [][2]string{{long, "v"}},
			append(append([]byte{0x80, 0, 0, 128, 1}, long...), 'v')},
		{"two", [][2]string{{"A", "1"}, {"B", "2"}}, []byte{1, 1, 'A', '1', 1, 1, 'B', '2'}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendPairs(nil, tt.pairs)
			if !bytes.Equal(got, tt.wire) {
				t.Fatalf("AppendPairs = %v, want %v", got, tt.wire)
			}
			back, err := ParsePairs(tt.wire)
			if err != nil || !reflect.DeepEqual(back, tt.pairs) {
				t.Errorf("ParsePairs = %q, %v", back, err)
			}
		})
	}
}

func TestParsePairsMalformed(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"name length only", []byte{3}},
		{"value length missing", []byte{1}},
		{"short four-byte length", []byte{0x80, 0, 1}},
		{"name cut", []byte{3, 0, 'a'}},
		{"value cut", []byte{1, 3, 'a', 'b'}},
		{"huge length", []byte{0xff, 0xff, 0xff, 0xff, 0}},
		{"good then cut", []byte{1, 1, 'a', 'b', 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParsePairs(tt.in); !errors.Is(err, ErrPairs) {
				t.Errorf("err %v, want ErrPairs", err)
			}
		})
	}
}

// TestPairsSplitAcrossRecords checks that a pair split between two PARAMS
// records decodes from the concatenated stream.
func TestPairsSplitAcrossRecords(t *testing.T) {
	pairs := [][2]string{{"SCRIPT_FILENAME", strings.Repeat("/x", 100)}, {"Q", "1"}}
	stream := AppendPairs(nil, pairs)
	for cut := 1; cut < len(stream); cut++ {
		wire := AppendRecord(nil, TypeParams, 1, stream[:cut])
		wire = AppendRecord(wire, TypeParams, 1, stream[cut:])
		wire = AppendRecord(wire, TypeParams, 1, nil)
		var joined []byte
		r := bytes.NewReader(wire)
		buf := make([]byte, MaxContent+MaxPadding)
		for {
			_, c, err := ReadRecord(r, buf)
			if err != nil {
				t.Fatal(err)
			}
			if len(c) == 0 {
				break
			}
			joined = append(joined, c...)
		}
		got, err := ParsePairs(joined)
		if err != nil || !reflect.DeepEqual(got, pairs) {
			t.Fatalf("cut %d: %q, %v", cut, got, err)
		}
	}
}

func TestGetValues(t *testing.T) {
	got := AppendGetValues(nil, VarMpxsConns)
	want := []byte{1, 9, 0, 0, 0, 17, 7, 0, 15, 0}
	want = append(want, VarMpxsConns...)
	want = append(want, 0, 0, 0, 0, 0, 0, 0)
	if !bytes.Equal(got, want) {
		t.Errorf("AppendGetValues = %v, want %v", got, want)
	}
}
