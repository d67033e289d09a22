// Package limit holds the one rule for every numeric setting of the
// gateway: the option structs of package gateway and gateway/mcp read it
// with Or, OrDefault and Check, and cmd/gateway binds its flags with Var,
// which the GATEWAY_* variables and the config file set by the same Set.
//
//   - Zero means the default, which the setting documents. Leaving a
//     setting out and setting it to 0 are the same thing.
//   - Off (any negative value) switches the setting off or leaves it
//     unbounded, where the setting allows it. Written, it is a word: "off"
//     for a duration, "unlimited" for a count or a size.
//   - A setting that may not be off (a call always has a deadline, a
//     stream is always bounded) refuses a negative value, naming itself.
//
// The package knows no flag, option or file: its callers name their
// settings in their own words.
package limit

import (
	"fmt"
	"strconv"
	"time"
)

// Number is what a setting under the rule holds: a count, a size in
// bytes, or a time.Duration.
type Number interface{ ~int | ~int64 }

// Off switches off, or unbounds, a setting that allows it. It is
// untyped, so it serves durations and counts alike; any negative value
// means the same.
const Off = -1

// The words that spell Off.
const (
	// OffWord is Off for a duration: "--refresh off".
	OffWord = "off"
	// UnlimitedWord is Off for a count or a size:
	// "--max-in-flight unlimited".
	UnlimitedWord = "unlimited"
)

// Or is v with the zero rule applied: def when v is zero, v otherwise
// (Off included). Use it for a setting that may be off.
func Or[T Number](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// OrDefault is v for a setting that may not be off, where its reader
// cannot return an error: def when v is zero or negative. A caller that
// takes the value from its users calls Check first, so a negative value
// is refused rather than quietly replaced.
func OrDefault[T Number](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Check refuses a negative value for a setting that may not be off.
// name is the setting in the caller's words ("Options.Calls.Timeout"); why,
// when not empty, says why it cannot be off.
func Check[T Number](name string, v T, why string) error {
	if v >= 0 {
		return nil
	}
	if why != "" {
		why = " (" + why + ")"
	}
	return fmt.Errorf("%s is %v: it cannot be off%s; 0 means the default", name, v, why)
}

// isDuration reports whether T is time.Duration, which is written as Go
// spells it ("30s") rather than as a whole number.
func isDuration[T Number]() bool {
	_, ok := any(T(0)).(time.Duration)
	return ok
}

// Word is the word that spells Off for T: OffWord for a duration,
// UnlimitedWord for a count or a size.
func Word[T Number]() string {
	if isDuration[T]() {
		return OffWord
	}
	return UnlimitedWord
}

// Parse reads a setting as written: a duration as Go spells it (for
// time.Duration) or a whole number, or, when offOK, the word that spells
// Off. It applies no default: "0" is 0. The error says what was
// expected; the caller, which knows where s came from, adds s.
func Parse[T Number](s string, offOK bool) (T, error) {
	if offOK && s == Word[T]() {
		return Off, nil
	}
	if isDuration[T]() {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("want %s", Expected[T](offOK))
		}
		return T(d), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || int64(T(n)) != n {
		return 0, fmt.Errorf("want %s", Expected[T](offOK))
	}
	return T(n), nil
}

// Expected names what Parse takes, for "want ..." in an error.
func Expected[T Number](offOK bool) string {
	what := "a whole number"
	if isDuration[T]() {
		what = "a duration such as 30s"
	}
	if offOK {
		return fmt.Sprintf("%s or %q", what, Word[T]())
	}
	return what
}

// Var is a setting bound to a variable under the rule, as a flag.Value:
// Set takes what Parse takes, makes 0 the default and, where the
// setting may be off, any negative value Off. A negative value of a
// setting that may not be off is kept, for the setting's own check to
// refuse by name.
type Var[T Number] struct {
	p     *T
	def   T
	offOK bool
}

// NewVar binds p, set to def, as a setting whose default is def; offOK
// says whether it may be off.
func NewVar[T Number](p *T, def T, offOK bool) *Var[T] {
	*p = def
	return &Var[T]{p: p, def: def, offOK: offOK}
}

// Set implements flag.Value. Its error, like the flag package's own,
// says what was expected; the flag package, or whoever read s, names s.
func (v *Var[T]) Set(s string) error {
	n, err := Parse[T](s, v.offOK)
	if err != nil {
		def := ""
		if v.def != 0 {
			def = fmt.Sprintf(" (%s)", v.format(v.def))
		}
		if v.offOK {
			return fmt.Errorf("want %s, 0 for the default%s, or %q", Expected[T](false), def, Word[T]())
		}
		return fmt.Errorf("want %s, or 0 for the default%s", Expected[T](false), def)
	}
	switch {
	case n == 0:
		*v.p = v.def
	case n < 0 && v.offOK:
		*v.p = Off
	default:
		*v.p = n
	}
	return nil
}

// String implements flag.Value: the value as Set takes it back.
func (v *Var[T]) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return v.format(*v.p)
}

func (v *Var[T]) format(n T) string {
	if v.offOK && n < 0 {
		return Word[T]()
	}
	if isDuration[T]() {
		return time.Duration(n).String()
	}
	return strconv.FormatInt(int64(n), 10)
}

// Default is the setting's default.
func (v *Var[T]) Default() T { return v.def }

// OffOK reports whether the setting may be off.
func (v *Var[T]) OffOK() bool { return v.offOK }

// Kind names the value for help text: "duration", "duration|off", "n"
// or "n|unlimited".
func (v *Var[T]) Kind() string {
	k := "n"
	if isDuration[T]() {
		k = "duration"
	}
	if v.offOK {
		k += "|" + Word[T]()
	}
	return k
}
