// Package results makes large tool results fit a model's context without
// losing them: [Fit] cuts a JSON result to a byte budget and records
// exactly what it cut, and [Store] keeps whole results readable for a
// while, per owner, bounded in bytes and count.
//
// It works on JSON bytes only (it knows nothing of protobuf or MCP; of the
// result's schema it is told only the root's required members, [Shape]),
// so it serves unary and stream results alike, after transcoding. A result
// under its budget costs one length comparison; a cut scans the JSON a
// bounded number of times and allocates only its output (the budget, or
// what the schema requires when that is more) and its records, never a
// tree of the document.
//
// This package is public because [StoreOptions] is what state.Open takes
// (a fleet keeps results the way one process does) and its defaults are
// those of gateway.ResultOptions; a program embedding the gateway uses
// nothing else of it.
package results

import (
	"strconv"
	"unicode/utf8"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
	"github.com/grpc-mcp-gateway/gateway/internal/jsonstr"
)

// Record is one cut: the value at Path kept Kept of its Total elements (an
// array) or characters (a string, Unit "characters"). Total is -1 when it
// is unknown (a stream the gateway stopped early), and Reason then says
// why. Paths use the result's property names, "." between members and
// [i] for array elements; a member name that is not a plain identifier is
// written as ["name"].
type Record struct {
	Path   string
	Kept   int
	Total  int
	Unit   string
	Reason string
}

// Units of a Record other than array elements (the default, "").
const (
	// UnitCharacters is the Unit of a shortened string.
	UnitCharacters = "characters"
	// UnitMembers is the Unit of the last resort's record (path ""): the
	// root object kept Kept of its Total members.
	UnitMembers = "members"
)

// AppendJSON appends r as the JSON object the truncation schema describes.
func (r Record) AppendJSON(b []byte) []byte {
	b = append(b, `{"path":`...)
	b = jsonstr.Append(b, r.Path)
	b = append(b, `,"kept":`...)
	b = strconv.AppendInt(b, int64(r.Kept), 10)
	if r.Total >= 0 {
		b = append(b, `,"total":`...)
		b = strconv.AppendInt(b, int64(r.Total), 10)
	}
	if r.Unit != "" {
		b = append(b, `,"unit":`...)
		b = jsonstr.Append(b, r.Unit)
	}
	if r.Reason != "" {
		b = append(b, `,"reason":`...)
		b = jsonstr.Append(b, r.Reason)
	}
	return append(b, '}')
}

// MaxRecords is how many cuts a result lists; further cuts are counted in
// [Fitted.Unlisted], so the list itself stays small.
const MaxRecords = 16

// MinStringKeep is the fewest characters a shortened string keeps; strings
// up to this long are never shortened. It keeps identifiers, resource
// names, timestamps, 64-bit integers and enum names whole, which a model
// needs for its next call and which the output schema constrains.
const MinStringKeep = 256

// Fitted is the outcome of Fit.
type Fitted struct {
	// JSON is the result to send: the input itself when it fits, else a
	// new buffer.
	JSON []byte
	// Records lists the cuts Fit made, at most MaxRecords.
	Records []Record
	// Unlisted counts the cuts left out of Records.
	Unlisted int
	// Cut is true when Fit shortened the result.
	Cut bool
	// Member is the name of the member the records went into ("" when
	// there are none): the name asked for, or (when not merging) that name
	// with leading underscores if the result already has a member of that
	// name.
	Member string
}

// Shape is what Fit needs to know of the schema a result conforms to.
type Shape struct {
	// Member is the name of the root member for the records of a cut.
	Member string
	// Merge says that a root member named Member that is an array holds
	// records of earlier cuts (a stream stopped at a limit): it is kept as
	// it is, never cut, and Fit's records follow its elements. Without
	// Merge such a member is the result's own data, and the records go
	// under a free name (Member with leading underscores).
	Merge bool
	// Required lists the root members the schema requires. The last
	// resort keeps them, so that the result still matches its schema.
	Required []string
}

// Fit returns the JSON object js cut to at most budget bytes (a budget
// <= 0 means no limit), with the records of what was cut as an array in
// the member shape.Member of the object. js must be a JSON object; the
// transcoder's compact output is what it is made for.
//
// Cuts go in this order, each only when the previous does not fit: every
// array keeps its first n elements, with the largest n that fits (n >= 1);
// then, with one element per array, every string longer than
// MinStringKeep characters keeps its first m, with the largest m that
// fits; then arrays are emptied and strings kept at MinStringKeep. Up to
// there only arrays and strings are cut, never object members, so every
// kept object still has the members its schema requires.
//
// If even that does not fit, the last resort keeps only the root members
// in shape.Required, cut as in the previous step, with a record for the
// whole result (path "", unit "members"). Those members alone can be
// over the budget (an object's members are never cut), and then so is the
// result: a client that validates structuredContent against the tool's
// output schema refuses a result without them (the TypeScript SDK's does),
// while the budget is the gateway's own target, not a limit a client set.
func Fit(js []byte, budget int, shape Shape) Fitted {
	if budget <= 0 || len(js) <= budget {
		return Fitted{JSON: js}
	}
	c := cutter{in: js, maxItems: -1, maxChars: -1, budget: budget, required: shape.Required}
	name := shape.Member
	if shape.Merge {
		c.earlier = earlierRecords(js, name)
	} else {
		name = freeName(js, name)
	}
	c.name = name
	longestArray, longestString := stats(js)
	if longestArray > 1 {
		c.maxItems = 1
		if c.measure(budget) {
			c.maxItems = largest(1, longestArray-1, func(n int) bool { c.maxItems = n; return c.measure(budget) })
			return c.write()
		}
	}
	if longestString > MinStringKeep {
		c.maxItems = min(longestArray, 1)
		if longestArray == 0 {
			c.maxItems = -1
		}
		c.maxChars = MinStringKeep
		if c.measure(budget) {
			c.maxChars = largest(MinStringKeep, longestString-1, func(m int) bool { c.maxChars = m; return c.measure(budget) })
			return c.write()
		}
	}
	c.maxItems, c.maxChars = 0, MinStringKeep
	if c.measure(budget) {
		return c.write()
	}
	return c.lastResort()
}

// largest is the largest n in [lo, hi] for which fits holds, given that it
// holds at lo and fits is monotone (true up to some n, false after).
func largest(lo, hi int, fits func(int) bool) int {
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// cutter walks js once per measure or write, with the current caps.
type cutter struct {
	in   []byte
	name string
	// earlier is the inside of the records array already in the result
	// (merge), nil when there is none.
	earlier  []byte
	maxItems int // arrays keep at most this many elements; -1: all
	maxChars int // strings keep at most this many characters; -1: all
	budget   int
	// required lists the root members the schema requires, and
	// onlyRequired has the root keep only those (the last resort).
	required     []string
	onlyRequired bool
	// ends caches, by the offset of an array's '[', its element count and
	// the offset after its ']', for arrays long enough that counting them
	// again in every pass of the search would dominate a cut.
	ends map[int][2]int
	// strs caches, by the offset of a string's opening quote, the offset
	// after its closing quote and its length in characters, for strings
	// longer than longString bytes: reading a string of megabytes again in
	// each of the search's twenty-odd passes made a 5 MiB response cost
	// the gateway 0.4 s of CPU.
	strs map[int][2]int

	// Per walk.
	writing  bool
	out      []byte
	size     int // bytes produced (measuring)
	limit    int // measuring stops once size passes it
	over     bool
	path     []byte
	recs     []Record
	unlisted int
	recBytes int // encoded size of the records member's elements
	cut      bool
}

func (c *cutter) emit(b []byte) {
	if c.writing {
		c.out = append(c.out, b...)
		return
	}
	c.size += len(b)
	if c.size > c.limit {
		c.over = true
	}
}

func (c *cutter) emitByte(b byte) {
	if c.writing {
		c.out = append(c.out, b)
		return
	}
	c.size++
	if c.size > c.limit {
		c.over = true
	}
}

func (c *cutter) reset() {
	c.out, c.size, c.over = c.out[:0], 0, false
	c.path = c.path[:0]
	c.recs, c.unlisted, c.recBytes, c.cut = c.recs[:0], 0, 0, false
}

// record adds a cut, counting the bytes it adds to the records member.
func (c *cutter) record(r Record) {
	if len(c.recs) >= MaxRecords {
		c.unlisted++
		return
	}
	var tmp [128]byte
	n := len(r.AppendJSON(tmp[:0]))
	if len(c.recs) > 0 || len(c.earlier) > 0 {
		n++
	}
	c.recBytes += n
	c.recs = append(c.recs, r)
}

// measure reports whether the current caps fit within budget, records
// included.
func (c *cutter) measure(budget int) bool {
	c.writing, c.limit = false, budget
	c.reset()
	c.object(0)
	if c.over {
		return false
	}
	return c.size+c.membersSize() <= budget
}

// membersSize is the size of the records member, comma included.
func (c *cutter) membersSize() int {
	if len(c.recs) == 0 && c.earlier == nil {
		return 0
	}
	return len(`,"":[]`) + len(c.name) + len(c.earlier) + c.recBytes
}

func (c *cutter) write() Fitted {
	c.writing, c.limit = true, 0
	c.reset()
	c.out = make([]byte, 0, min(len(c.in), c.budget))
	c.object(0)
	return c.fitted()
}

// fitted closes the root object with the records member.
func (c *cutter) fitted() Fitted {
	f := Fitted{Records: c.recs, Unlisted: c.unlisted, Cut: c.cut}
	b := c.out[:len(c.out)-1] // the root's '}'
	if len(c.recs) > 0 || c.earlier != nil {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, c.name)
		b = append(b, ":["...)
		b = append(b, c.earlier...)
		for i, r := range c.recs {
			if i > 0 || len(c.earlier) > 0 {
				b = append(b, ',')
			}
			b = r.AppendJSON(b)
		}
		b = append(b, ']')
		f.Member = c.name
	}
	f.JSON = append(b, '}')
	return f
}

// lastResort keeps only the root members the schema requires, with
// arrays emptied and strings at MinStringKeep, and a record for the whole
// result.
func (c *cutter) lastResort() Fitted {
	members, kept := 0, 0
	i := jsonscan.SpaceEnd(c.in, 1)
	for i < len(c.in) && c.in[i] != '}' {
		var key []byte
		key, i = c.skipMember(i)
		if c.earlier != nil && c.isName(key) {
			continue // the earlier records, not the result's data
		}
		members++
		if c.isRequired(key) {
			kept++
		}
	}
	reason := "even with every array emptied and every long string shortened the result did not fit the budget"
	if kept > 0 {
		reason += ", so it keeps only the members its schema requires"
	}
	reason += "; read the whole result instead"
	c.writing, c.limit = true, 0
	c.reset()
	c.record(Record{Path: "", Kept: kept, Total: members, Unit: UnitMembers, Reason: reason})
	c.cut = true
	c.onlyRequired = true
	c.out = make([]byte, 0, c.budget)
	c.object(0)
	return c.fitted()
}

// isName reports whether the member name key (quoted, as in the input) is
// the records member's.
func (c *cutter) isName(key []byte) bool {
	return string(key[1:len(key)-1]) == c.name
}

// isRequired reports whether the root member name key (quoted) is one the
// schema requires.
func (c *cutter) isRequired(key []byte) bool {
	for _, r := range c.required {
		if string(key[1:len(key)-1]) == r {
			return true
		}
	}
	return false
}

// object walks the object at i (in[i] == '{') and returns the index after
// it.
func (c *cutter) object(i int) int {
	root := i == 0
	c.emitByte('{')
	i = jsonscan.SpaceEnd(c.in, i+1)
	first := true
	for i < len(c.in) && c.in[i] != '}' && !c.over {
		if c.in[i] == ',' {
			i = jsonscan.SpaceEnd(c.in, i+1)
			continue
		}
		keyEnd := jsonscan.StringEnd(c.in, i)
		key := c.in[i:keyEnd]
		if root && (c.earlier != nil && c.isName(key) || c.onlyRequired && !c.isRequired(key)) {
			// The earlier records are written with the new ones; the last
			// resort drops what the schema does not require.
			_, i = c.skipMember(i)
			continue
		}
		if !first {
			c.emitByte(',')
		}
		first = false
		c.emit(key)
		c.emitByte(':')
		i = jsonscan.SpaceEnd(c.in, keyEnd)
		i = jsonscan.SpaceEnd(c.in, i+1) // ':'
		mark := len(c.path)
		c.pushKey(key)
		i = c.value(i)
		c.path = c.path[:mark]
		i = jsonscan.SpaceEnd(c.in, i)
	}
	c.emitByte('}')
	return i + 1
}

// pushKey appends a member name to the path.
func (c *cutter) pushKey(key []byte) {
	inner := key[1 : len(key)-1]
	if plain(inner) {
		if len(c.path) > 0 {
			c.path = append(c.path, '.')
		}
		c.path = append(c.path, inner...)
		return
	}
	c.path = append(c.path, '[')
	c.path = append(c.path, key...)
	c.path = append(c.path, ']')
}

func plain(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for _, ch := range s {
		if !(ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}

func (c *cutter) value(i int) int {
	switch c.in[i] {
	case '{':
		return c.object(i)
	case '[':
		return c.array(i)
	case '"':
		return c.str(i)
	}
	end := jsonscan.ScalarEnd(c.in, i)
	c.emit(c.in[i:end])
	return end
}

func (c *cutter) array(i int) int {
	start := i
	c.emitByte('[')
	i = jsonscan.SpaceEnd(c.in, i+1)
	n := 0
	var idx [20]byte
	for i < len(c.in) && c.in[i] != ']' && !c.over {
		if c.in[i] == ',' {
			i = jsonscan.SpaceEnd(c.in, i+1)
			continue
		}
		if c.maxItems >= 0 && n >= c.maxItems {
			total, end := c.countRest(start, i, n)
			c.cut = true
			c.record(Record{Path: string(c.path), Kept: n, Total: total})
			c.emitByte(']')
			return end
		}
		if n > 0 {
			c.emitByte(',')
		}
		mark := len(c.path)
		c.path = append(c.path, '[')
		c.path = append(c.path, strconv.AppendInt(idx[:0], int64(n), 10)...)
		c.path = append(c.path, ']')
		i = c.value(i)
		c.path = c.path[:mark]
		i = jsonscan.SpaceEnd(c.in, i)
		n++
	}
	c.emitByte(']')
	return i + 1
}

// countRest counts the elements of the array at start, n of which come
// before i, and returns the count and the offset after the array.
func (c *cutter) countRest(start, i, n int) (int, int) {
	if e, ok := c.ends[start]; ok {
		return e[0], e[1]
	}
	total := n
	for i < len(c.in) && c.in[i] != ']' {
		if c.in[i] == ',' {
			i = jsonscan.SpaceEnd(c.in, i+1)
			continue
		}
		i = jsonscan.SpaceEnd(c.in, jsonscan.ValueEnd(c.in, i))
		total++
	}
	if total-n > 256 {
		if c.ends == nil {
			c.ends = make(map[int][2]int)
		}
		c.ends[start] = [2]int{total, i + 1}
	}
	return total, i + 1
}

// str walks the string at i, shortening it past maxChars characters. The
// cut falls between characters, never inside an escape or a UTF-8
// sequence, so the result is still valid JSON and valid UTF-8.
func (c *cutter) str(i int) int {
	if e, ok := c.strs[i]; ok {
		return c.cutString(i, e[0], e[1])
	}
	end := jsonscan.StringEnd(c.in, i)
	if c.maxChars < 0 || end-i-2 <= c.maxChars {
		// Fewer bytes than the cap means fewer characters too.
		c.emit(c.in[i:end])
		return end
	}
	chars := 0
	for j := i + 1; j < end-1; chars++ {
		if b := c.in[j]; b < utf8.RuneSelf && b != '\\' {
			j++ // most of a long string: no call per byte
			continue
		}
		j += charLen(c.in, j)
	}
	if end-i > longString {
		if c.strs == nil {
			c.strs = make(map[int][2]int)
		}
		c.strs[i] = [2]int{end, chars}
	}
	return c.cutString(i, end, chars)
}

// longString is the length in bytes past which str caches a string's end
// and length (strs).
const longString = 4096

// cutString emits the string from i to end, of chars characters, cut to
// maxChars. Measuring, it reads no further than the budget can hold.
func (c *cutter) cutString(i, end, chars int) int {
	if c.maxChars < 0 || chars <= c.maxChars {
		c.emit(c.in[i:end])
		return end
	}
	room := -1 // bytes the kept part may have before the measure is over
	if !c.writing {
		room = c.limit - c.size
	}
	cutAt := i + 1
	for kept := 0; kept < c.maxChars; kept++ {
		if room >= 0 && cutAt-i > room {
			c.size, c.over = c.limit+1, true
			return end
		}
		cutAt += charLen(c.in, cutAt)
	}
	c.emit(c.in[i:cutAt])
	c.emitByte('"')
	c.cut = true
	c.record(Record{Path: string(c.path), Kept: c.maxChars, Total: chars, Unit: UnitCharacters})
	return end
}

// charLen is the length in bytes of the JSON string character at j: an
// escape (a surrogate pair is one character) or a UTF-8 sequence.
func charLen(b []byte, j int) int {
	if b[j] == '\\' {
		if j+1 < len(b) && b[j+1] == 'u' {
			if j+11 < len(b) && b[j+6] == '\\' && b[j+7] == 'u' && isHighSurrogate(b[j+2:j+6]) {
				return 12
			}
			return 6
		}
		return 2
	}
	if b[j] < utf8.RuneSelf {
		return 1
	}
	_, n := utf8.DecodeRune(b[j:])
	return n
}

func isHighSurrogate(hex []byte) bool {
	v, err := strconv.ParseUint(string(hex), 16, 16)
	return err == nil && v >= 0xD800 && v < 0xDC00
}

// skipMember returns the key of the member at i and the index after its
// value (and a following comma).
func (c *cutter) skipMember(i int) ([]byte, int) {
	keyEnd := jsonscan.StringEnd(c.in, i)
	key := c.in[i:keyEnd]
	i = jsonscan.SpaceEnd(c.in, keyEnd)
	i = jsonscan.SpaceEnd(c.in, i+1)
	i = jsonscan.SpaceEnd(c.in, jsonscan.ValueEnd(c.in, i))
	if i < len(c.in) && c.in[i] == ',' {
		i = jsonscan.SpaceEnd(c.in, i+1)
	}
	return key, i
}

// earlierRecords returns the inside of the array in the root member name
// (empty, not nil, for []), or nil when there is no such array.
func earlierRecords(js []byte, name string) []byte {
	c := cutter{in: js}
	i := jsonscan.SpaceEnd(js, 1)
	for i < len(js) && js[i] != '}' {
		keyEnd := jsonscan.StringEnd(js, i)
		key := js[i:keyEnd]
		v := jsonscan.SpaceEnd(js, jsonscan.SpaceEnd(js, keyEnd)+1)
		_, next := c.skipMember(i)
		if string(key[1:len(key)-1]) == name && js[v] == '[' {
			end := jsonscan.ValueEnd(js, v)
			return js[v+1 : end-1 : end-1]
		}
		i = next
	}
	return nil
}

// freeName is name, or name with underscores before it, such that the
// root object has no member of that name.
func freeName(js []byte, name string) string {
	c := cutter{in: js}
	for {
		taken := false
		i := jsonscan.SpaceEnd(js, 1)
		for i < len(js) && js[i] != '}' {
			var key []byte
			key, i = c.skipMember(i)
			if string(key[1:len(key)-1]) == name {
				taken = true
				break
			}
		}
		if !taken {
			return name
		}
		name = "_" + name
	}
}

// stats returns the length of the longest array and of the longest string
// (in characters, bounded above by its bytes) in js.
func stats(js []byte) (longestArray, longestString int) {
	type frame struct{ n int }
	var stack []frame
	for i := 0; i < len(js); {
		switch js[i] {
		case '[':
			stack = append(stack, frame{})
			i = jsonscan.SpaceEnd(js, i+1)
			if i < len(js) && js[i] != ']' && len(stack) > 0 {
				stack[len(stack)-1].n = 1
			}
			continue
		case ']':
			if n := len(stack); n > 0 {
				longestArray = max(longestArray, stack[n-1].n)
				stack = stack[:n-1]
			}
		case '{':
			stack = append(stack, frame{n: -1})
		case '}':
			if n := len(stack); n > 0 {
				stack = stack[:n-1]
			}
		case ',':
			if n := len(stack); n > 0 && stack[n-1].n >= 0 {
				stack[n-1].n++
			}
		case '"':
			end := jsonscan.StringEnd(js, i)
			longestString = max(longestString, end-i-2)
			i = end
			continue
		}
		i++
	}
	return longestArray, longestString
}
