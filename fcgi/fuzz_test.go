package fcgi

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/backbench/backbench/internal/load"
)

// FuzzRecords checks that AppendRecord round-trips any content through
// ReadRecord in 8-byte-aligned records, and that ReadRecord survives any
// byte stream, returning only records that re-encode to what it read.
func FuzzRecords(f *testing.F) {
	f.Add(uint8(6), uint16(1), []byte("Status: 200 OK\r\n\r\nhi"))
	f.Add(uint8(4), uint16(0), []byte{})
	f.Add(uint8(3), uint16(65535), []byte{1, 6, 0, 1, 0, 3, 5, 0, 'a', 'b', 'c', 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, typ uint8, id uint16, content []byte) {
		wire := AppendRecord(nil, RecType(typ), id, content)
		buf := make([]byte, MaxContent+MaxPadding)
		r := bytes.NewReader(wire)
		var joined []byte
		records := 0
		for r.Len() > 0 {
			h, c, err := ReadRecord(r, buf)
			if err != nil {
				t.Fatalf("record %d: %v", records, err)
			}
			if h.Version != Version1 || h.Type != RecType(typ) || h.ID != id || len(c) > ChunkSize ||
				(int(h.ContentLength)+int(h.PaddingLength))%8 != 0 || int(h.PaddingLength) != Padding(len(c)) {
				t.Fatalf("record %d header %+v", records, h)
			}
			joined = append(joined, c...)
			records++
		}
		if !bytes.Equal(joined, content) {
			t.Fatal("content changed by the round trip")
		}
		if want := max(1, (len(content)+ChunkSize-1)/ChunkSize); records != want {
			t.Fatalf("%d records for %d bytes, want %d", records, len(content), want)
		}

		// The content as a raw stream of records.
		r = bytes.NewReader(content)
		for off := 0; r.Len() > 0; {
			h, c, err := ReadRecord(r, buf)
			if err != nil {
				break
			}
			n := HeaderLen + int(h.ContentLength) + int(h.PaddingLength)
			src := content[off : off+n]
			re := AppendHeader(nil, h.Type, h.ID, len(c), int(h.PaddingLength))
			if !bytes.Equal(re[1:7], src[1:7]) || !bytes.Equal(c, src[HeaderLen:HeaderLen+len(c)]) {
				t.Fatalf("record at %d re-encodes as %v, read %v", off, re, src[:HeaderLen])
			}
			off += n
		}
	})
}

// FuzzPairs checks that name-value pairs round-trip, and that whatever
// ParsePairs accepts re-encodes to pairs it parses the same way.
func FuzzPairs(f *testing.F) {
	f.Add("SCRIPT_FILENAME", "/var/www/index.php", []byte{1, 2, 'A', 'b', 'c'})
	f.Add("", "", []byte{0x80, 0, 0, 1, 0, 'x'})
	f.Add(string(make([]byte, 200)), "v", []byte{3})
	f.Fuzz(func(t *testing.T, name, value string, raw []byte) {
		in := [][2]string{{name, value}, {value, name}}
		got, err := ParsePairs(AppendPairs(nil, in))
		if err != nil || !reflect.DeepEqual(got, in) {
			t.Fatalf("round trip of %q gave %q, %v", in, got, err)
		}
		pairs, err := ParsePairs(raw)
		if err != nil {
			return
		}
		again, err := ParsePairs(AppendPairs(nil, pairs))
		if err != nil || !reflect.DeepEqual(again, pairs) {
			t.Fatalf("re-encoding %q gave %q, %v", pairs, again, err)
		}
	})
}

// feed runs the client's STDOUT parser over parts, as if each came in its
// own record.
func feed(parts ...[]byte) (r load.Result, inBody bool, err error) {
	c := &client{}
	for _, p := range parts {
		if len(p) == 0 {
			continue
		}
		if err = c.stdout(&r, p); err != nil {
			return r, c.inBody, err
		}
	}
	return r, c.inBody, nil
}

// FuzzCGIHeaders checks the CGI header parser: it never panics, and a
// STDOUT stream split across records at any two points reads as it does in
// one piece.
func FuzzCGIHeaders(f *testing.F) {
	f.Add([]byte("Status: 404 Not Found\r\nContent-Type: text/html\r\n\r\nbody"), 5, 30)
	f.Add([]byte("Server: Apache/2 (Unix)\nLocation: /x\n\n"), 1, 2)
	f.Add([]byte("\r\n"), 0, 1)
	f.Add([]byte("Status: 20x\r\n\r\n"), 3, 3)
	f.Fuzz(func(t *testing.T, data []byte, i, j int) {
		if len(data) == 0 {
			return
		}
		i = int(uint(i) % uint(len(data)+1))
		j = int(uint(j) % uint(len(data)+1))
		if i > j {
			i, j = j, i
		}
		whole, wholeIn, wholeErr := feed(data)
		split, splitIn, splitErr := feed(data[:i], data[i:j], data[j:])
		if (wholeErr == nil) != (splitErr == nil) || wholeIn != splitIn {
			t.Fatalf("whole: %v in body %v; split at %d,%d: %v in body %v", wholeErr, wholeIn, i, j, splitErr, splitIn)
		}
		if wholeErr == nil && (whole.Status != split.Status || whole.BodyBytes != split.BodyBytes || !bytes.Equal(whole.Server, split.Server)) {
			t.Fatalf("whole %d/%d/%q, split %d/%d/%q", whole.Status, whole.BodyBytes, whole.Server, split.Status, split.BodyBytes, split.Server)
		}
		if wholeIn && wholeErr == nil {
			end, body, _ := FindHeaderEnd(data, 0)
			if end < 0 || whole.BodyBytes != int64(len(data)-body) {
				t.Fatalf("body %d bytes, head ends at %d/%d of %d", whole.BodyBytes, end, body, len(data))
			}
			if whole.Status < 100 || whole.Status > 999 {
				t.Fatalf("status %d", whole.Status)
			}
		}
	})
}
