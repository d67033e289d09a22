package descriptors

import (
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Comments holds the source info of a Result's files (their comments and
// the places of their declarations) apart from their descriptors, which
// the sources build without it. protodesc.NewFile turns each location
// into a 120-byte struct, keeps the decoded message's paths and strings,
// and indexes every location by path at the first lookup: on the
// googleapis catalog (~6,000 files, 400,000 locations once slimmed) that
// was a quarter of the live heap. Here a file's locations stay in their
// wire form, with a sorted index of 8 bytes per location; a lookup
// decodes the one location it finds, its comments aliasing the wire form
// (docs/scale.md has the figures).
//
// Read comments through Location, which falls back to the descriptors'
// own source info for files it does not hold (the bundled files,
// descriptors built elsewhere). The files a TypeResolver fetches after
// discovery, for the values of Any fields, keep no comments: nothing
// describes them. A nil *Comments holds no file. A Comments is never
// changed once its Result is returned, so it is safe for concurrent use.
type Comments struct {
	files map[protoreflect.FileDescriptor]*fileInfo
}

// fileInfo is one file's source info, slimmed (slimSourceInfo).
type fileInfo struct {
	// wire is the SourceCodeInfo message in the wire format. It is never
	// changed, so the comments a lookup returns alias it.
	wire []byte
	// keys are the hashes of the locations' paths, sorted; offs the
	// offsets in wire of the locations' messages (their length prefix),
	// in keys's order.
	keys []uint32
	offs []uint32
}

// Location returns d's source location as d.ParentFile().SourceLocations()
// .ByDescriptor(d) would if the descriptors held their source info: the
// first location of d's path carrying a comment or, without one, the
// first of that path.
func (c *Comments) Location(d protoreflect.Descriptor) protoreflect.SourceLocation {
	f := d.ParentFile()
	if f == nil {
		return protoreflect.SourceLocation{}
	}
	if fi := c.file(f); fi != nil {
		return fi.location(d)
	}
	return f.SourceLocations().ByDescriptor(d)
}

// SourceInfo returns fd's source info as a message (a new one on each
// call, the caller's to change), or fd's own when Comments does not hold
// fd; nil when it has none.
func (c *Comments) SourceInfo(fd protoreflect.FileDescriptor) *descriptorpb.SourceCodeInfo {
	fi := c.file(fd)
	if fi == nil {
		if fd.SourceLocations().Len() == 0 {
			return nil
		}
		return ToFileDescriptorProto(fd, nil).GetSourceCodeInfo()
	}
	info := new(descriptorpb.SourceCodeInfo)
	if err := proto.Unmarshal(fi.wire, info); err != nil {
		// Cannot happen: wire was marshalled, or checked, by newFileInfo.
		panic(fmt.Sprintf("reflection: source info of %s: %v", fd.Path(), err))
	}
	return info
}

// ToFileDescriptorProto is protodesc.ToFileDescriptorProto(fd) with fd's
// source info from c when c holds it.
func ToFileDescriptorProto(fd protoreflect.FileDescriptor, c *Comments) *descriptorpb.FileDescriptorProto {
	fdp := protodesc.ToFileDescriptorProto(fd)
	if c.file(fd) != nil {
		fdp.SourceCodeInfo = c.SourceInfo(fd)
	}
	return fdp
}

func (c *Comments) file(fd protoreflect.FileDescriptor) *fileInfo {
	if c == nil {
		return nil
	}
	return c.files[fd]
}

// add records fi as fd's; fi may be nil.
func (c *Comments) add(fd protoreflect.FileDescriptor, fi *fileInfo) {
	if fi == nil {
		return
	}
	if c.files == nil {
		c.files = make(map[protoreflect.FileDescriptor]*fileInfo)
	}
	c.files[fd] = fi
}

// Field numbers of the SourceCodeInfo messages.
const (
	fileSourceCodeInfo = 9 // of FileDescriptorProto

	infoLocation     = 1
	locPath          = 1
	locSpan          = 2
	locLeading       = 3
	locTrailing      = 4
	locLeadingDetach = 6
)

// pathSeed makes the index's hashes; it only has to be the same for a
// process's builds and lookups.
var pathSeed = maphash.MakeSeed()

func hashPath(p []int32) uint32 {
	var h maphash.Hash
	h.SetSeed(pathSeed)
	var b [4]byte
	for _, v := range p {
		b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		_, _ = h.Write(b[:])
	}
	return uint32(h.Sum64())
}

// newFileInfo keeps info's locations that slimSourceInfo keeps, in the wire
// format, and indexes them. A location whose span has neither 3 nor 4
// elements is an error, as protodesc.NewFile makes it.
func newFileInfo(info *descriptorpb.SourceCodeInfo) (*fileInfo, error) {
	kept := &descriptorpb.SourceCodeInfo{Location: slices.Clone(info.GetLocation())}
	slimSourceInfo(kept)
	if len(kept.Location) == 0 {
		return nil, nil
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(kept)
	if err != nil {
		return nil, fmt.Errorf("source info: %w", err)
	}
	return fileInfoOf(b)
}

// fileInfoOf indexes wire, a SourceCodeInfo message in the wire format.
func fileInfoOf(wire []byte) (*fileInfo, error) {
	type entry struct{ key, off uint32 }
	var entries []entry
	var path []int32
	for off := 0; off < len(wire); {
		num, typ, n := protowire.ConsumeTag(wire[off:])
		if n < 0 {
			return nil, fmt.Errorf("source info: %w", protowire.ParseError(n))
		}
		if num != infoLocation || typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, wire[off+n:])
			if m < 0 {
				return nil, fmt.Errorf("source info: %w", protowire.ParseError(m))
			}
			off += n + m
			continue
		}
		loc, m := protowire.ConsumeBytes(wire[off+n:])
		if m < 0 {
			return nil, fmt.Errorf("source info: %w", protowire.ParseError(m))
		}
		var err error
		var spans int
		path, spans, err = scanLocation(loc, path[:0], nil)
		if err != nil {
			return nil, err
		}
		if spans != 3 && spans != 4 {
			return nil, fmt.Errorf("invalid span: %d elements, want 3 or 4 (path %v)", spans, path)
		}
		entries = append(entries, entry{hashPath(path), uint32(off + n)})
		off += n + m
	}
	if len(entries) == 0 {
		return nil, nil
	}
	// Stable: locations of one path stay in their order.
	slices.SortStableFunc(entries, func(a, b entry) int { return cmp.Compare(a.key, b.key) })
	fi := &fileInfo{wire: wire, keys: make([]uint32, len(entries)), offs: make([]uint32, len(entries))}
	for i, e := range entries {
		fi.keys[i], fi.offs[i] = e.key, e.off
	}
	return fi, nil
}

var errLocation = errors.New("source info: a malformed location")

// scanLocation reads a location's path (appended to path) and counts its
// span's elements; with into, it also fills into's other fields, their
// strings aliasing loc.
func scanLocation(loc []byte, path []int32, into *protoreflect.SourceLocation) ([]int32, int, error) {
	spans := 0
	var span [4]int32
	number := func(num protowire.Number, v uint64) {
		if num == locPath {
			path = append(path, int32(v))
			return
		}
		if spans < len(span) {
			span[spans] = int32(v)
		}
		spans++
	}
	for len(loc) > 0 {
		num, typ, n := protowire.ConsumeTag(loc)
		if n < 0 {
			return nil, 0, errLocation
		}
		loc = loc[n:]
		switch {
		case (num == locPath || num == locSpan) && typ == protowire.BytesType: // packed
			packed, m := protowire.ConsumeBytes(loc)
			if m < 0 {
				return nil, 0, errLocation
			}
			loc = loc[m:]
			for len(packed) > 0 {
				v, k := protowire.ConsumeVarint(packed)
				if k < 0 {
					return nil, 0, errLocation
				}
				packed = packed[k:]
				number(num, v)
			}
			continue
		case (num == locPath || num == locSpan) && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(loc)
			if m < 0 {
				return nil, 0, errLocation
			}
			loc = loc[m:]
			number(num, v)
			continue
		case (num == locLeading || num == locTrailing || num == locLeadingDetach) && typ == protowire.BytesType:
			s, m := protowire.ConsumeBytes(loc)
			if m < 0 {
				return nil, 0, errLocation
			}
			loc = loc[m:]
			if into != nil {
				// wire is never changed: its comments need no copy.
				text := unsafe.String(unsafe.SliceData(s), len(s))
				switch num {
				case locLeading:
					into.LeadingComments = text
				case locTrailing:
					into.TrailingComments = text
				default:
					into.LeadingDetachedComments = append(into.LeadingDetachedComments, text)
				}
			}
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, loc)
		if m < 0 {
			return nil, 0, errLocation
		}
		loc = loc[m:]
	}
	if into != nil {
		switch spans {
		case 3:
			into.StartLine, into.StartColumn, into.EndLine, into.EndColumn = int(span[0]), int(span[1]), int(span[0]), int(span[2])
		case 4:
			into.StartLine, into.StartColumn, into.EndLine, into.EndColumn = int(span[0]), int(span[1]), int(span[2]), int(span[3])
		}
	}
	return path, spans, nil
}

// location finds d's location; see Comments.Location.
func (fi *fileInfo) location(d protoreflect.Descriptor) protoreflect.SourceLocation {
	var buf [16]int32
	want, ok := appendPath(buf[:0], d)
	if !ok {
		return protoreflect.SourceLocation{}
	}
	key := hashPath(want)
	i, _ := slices.BinarySearch(fi.keys, key)
	var first protoreflect.SourceLocation
	found := false
	var scratch [16]int32
	for ; i < len(fi.keys) && fi.keys[i] == key; i++ {
		off := int(fi.offs[i])
		loc, _ := protowire.ConsumeBytes(fi.wire[off:])
		var l protoreflect.SourceLocation
		path, _, err := scanLocation(loc, scratch[:0], &l)
		if err != nil || !slices.Equal(path, want) {
			continue
		}
		l.Path = protoreflect.SourcePath(slices.Clone(want))
		if l.LeadingComments != "" || l.TrailingComments != "" || len(l.LeadingDetachedComments) > 0 {
			return l
		}
		if !found {
			first, found = l, true
		}
	}
	return first
}

// appendPath appends d's source info path to p, as protoc writes it; false
// for a descriptor of no place in its file.
func appendPath(p []int32, d protoreflect.Descriptor) ([]int32, bool) {
	parent := d.Parent()
	if parent == nil {
		return p, d.ParentFile() == d
	}
	_, inFile := parent.(protoreflect.FileDescriptor)
	var field int32
	switch d := d.(type) {
	case protoreflect.MessageDescriptor:
		field = msgNestedType
		if inFile {
			field = fileMessageType
		}
	case protoreflect.EnumDescriptor:
		field = msgEnumType
		if inFile {
			field = fileEnumType
		}
	case protoreflect.FieldDescriptor:
		switch {
		case !d.IsExtension():
			field = msgField
		case inFile:
			field = fileExtension
		default:
			field = msgExtension
		}
	case protoreflect.OneofDescriptor:
		field = msgOneof
	case protoreflect.EnumValueDescriptor:
		field = enumValue
	case protoreflect.ServiceDescriptor:
		field = fileService
	case protoreflect.MethodDescriptor:
		field = serviceMethod
	default:
		return p, false
	}
	p, ok := appendPath(p, parent)
	if !ok {
		return p, false
	}
	return append(p, field, int32(d.Index())), true
}
