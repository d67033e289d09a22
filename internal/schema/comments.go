package schema

import (
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// comments returns d's leading and trailing comments as plain text, read
// from src (nil: the descriptors' own source info), or "" when there are
// none (the usual case for reflection). Detached comments are ignored:
// they describe something else, often a license header or a section
// banner.
func comments(src CommentSource, d protoreflect.Descriptor) string {
	f := d.ParentFile()
	if f == nil {
		return ""
	}
	var loc protoreflect.SourceLocation
	if src != nil {
		loc = src.Location(d)
	} else {
		loc = f.SourceLocations().ByDescriptor(d)
	}
	var parts []string
	for _, c := range []string{loc.LeadingComments, loc.TrailingComments} {
		if c = CleanComment(c); c != "" {
			parts = append(parts, c)
		}
	}
	return strings.Join(parts, "\n\n")
}

// CleanComment removes what protoc leaves of the comment syntax: the space
// after "//", the " * " of block comments, and indentation common to all
// lines, keeping relative indentation (code samples) and paragraph breaks.
func CleanComment(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	star := true
	for _, l := range lines {
		if t := strings.TrimLeft(l, " \t"); t != "" && !strings.HasPrefix(t, "*") {
			star = false
			break
		}
	}
	if star {
		for i, l := range lines {
			t := strings.TrimPrefix(strings.TrimLeft(l, " \t"), "*")
			lines[i] = strings.TrimRight(t, " \t")
		}
	}
	indent := -1
	for _, l := range lines {
		if t := strings.TrimLeft(l, " \t"); t != "" {
			if n := len(l) - len(t); indent < 0 || n < indent {
				indent = n
			}
		}
	}
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			lines[i] = l[indent:]
		}
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}
