package schema

import (
	"bytes"
	"strconv"
	"time"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// Timestamps and durations for the wire converter (argwire.go): protojson
// writes both as strings, and reads them by the rules below. A form the
// converter is not sure of is declined, like everything else.

// Bounds protojson holds Timestamp and Duration values to: years 1 to
// 9999, and about ±10,000 years.
const (
	minTimestampSeconds = -62135596800
	maxTimestampSeconds = 253402300799
	maxDurationSeconds  = 315576000000
)

// timestamp converts an RFC 3339 string as protojson does: time.Parse
// with RFC3339Nano, seconds within years 1 to 9999, at most nine digits
// of fraction.
func (w *wireState) timestamp(b []byte) ([]byte, bool) {
	raw, ok := w.str()
	if !ok {
		return b, false
	}
	// The string is not kept: time.Parse keeps none of it in a result.
	s := unsafe.String(unsafe.SliceData(raw), len(raw))
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return b, false
	}
	secs := t.Unix()
	if secs < minTimestampSeconds || secs > maxTimestampSeconds {
		return b, false
	}
	if i, j := bytes.LastIndexByte(raw, '.'), bytes.LastIndexAny(raw, "Z-+"); i >= 0 && j >= i && j-i > len(".999999999") {
		return b, false
	}
	return appendSecondsNanos(b, secs, int32(t.Nanosecond())), true
}

// duration converts a Duration's string: "-"? then the seconds (0 or
// digits without a leading zero), then a fraction of one to nine digits
// or none, then "s". protojson also takes "+1s", "1.s" and ".5s", which
// are declined here, as is any escape.
func (w *wireState) duration(b []byte) ([]byte, bool) {
	raw, ok := w.quoted()
	if !ok || len(raw) < 2 || raw[len(raw)-1] != 's' {
		return b, false
	}
	s := raw[:len(raw)-1]
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 1 && s[0] == '0' {
		return b, false
	}
	secs, err := strconv.ParseInt(unsafe.String(unsafe.SliceData(s), i), 10, 64)
	if err != nil || secs > maxDurationSeconds {
		return b, false
	}
	var nanos int32
	if i < len(s) {
		frac := s[i+1:]
		if s[i] != '.' || len(frac) == 0 || len(frac) > 9 {
			return b, false
		}
		for k := range 9 {
			d := int32(0)
			if k < len(frac) {
				if frac[k] < '0' || frac[k] > '9' {
					return b, false
				}
				d = int32(frac[k] - '0')
			}
			nanos = nanos*10 + d
		}
	}
	if neg {
		secs, nanos = -secs, -nanos
	}
	w.pos += len(raw) + 2
	return appendSecondsNanos(b, secs, nanos), true
}

// appendSecondsNanos writes a Timestamp's or Duration's two fields,
// leaving out a zero one (both are proto3 implicit).
func appendSecondsNanos(b []byte, secs int64, nanos int32) []byte {
	if secs != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(secs))
	}
	if nanos != 0 {
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(int64(nanos)))
	}
	return b
}
