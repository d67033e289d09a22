package main

import (
	"fmt"
	"strings"
)

// flagName is a setting named in an error's text: a settingError's
// argument, shown as --name until inSettingWords names it as the
// operator gave it.
type flagName string

func (f flagName) String() string { return "--" + string(f) }

// settingError is an error cmd/gateway finds about one or more settings.
// It keeps its format and arguments, the settings among them as
// flagNames, so that inSettingWords can write it again naming each
// setting where the operator gave it (the flag, the GATEWAY_* variable,
// the config file's line and key) rather than finding flag names in its
// text.
type settingError struct {
	format string
	args   []any
	err    error // as fmt.Errorf makes it, naming the flags
}

// settingErrorf is fmt.Errorf for an error about the settings among
// args, given as flagNames.
func settingErrorf(format string, args ...any) error {
	return &settingError{format: format, args: args, err: fmt.Errorf(format, args...)}
}

func (e *settingError) Error() string { return e.err.Error() }
func (e *settingError) Unwrap() error { return e.err }

// in is e's text with each setting named as from has it. The setting
// the text opens with is named in full (gateway.yaml:3: call_timeout,
// GATEWAY_CALL_TIMEOUT, --call-timeout); one named later by its
// variable, its flag, or its config key: the key alone when the text
// opened with the file's line, with the file's line after it when not.
func (e *settingError) in(from origins) string {
	lead := strings.HasPrefix(e.format, "%") && !strings.HasPrefix(e.format, "%%")
	inFile := false
	args := make([]any, len(e.args))
	for i, a := range e.args {
		args[i] = a
		switch a := a.(type) {
		case flagName:
			args[i] = from.name(string(a), lead && i == 0, inFile)
			if lead && i == 0 {
				inFile = from.inFile(string(a))
			}
		case *settingError:
			// A setting's name made of words and flags (a backend's
			// token_exchange "with --backend-token-exchange"), or a
			// cause that names settings of its own.
			args[i] = &renderedError{msg: a.in(from), err: a}
		}
	}
	return fmt.Errorf(e.format, args...).Error()
}

// renderedError is a settingError's text in the operator's words, still
// wrapping it, so it may stand for a %w argument as well as a %s one.
type renderedError struct {
	msg string
	err error
}

func (e *renderedError) Error() string { return e.msg }
func (e *renderedError) Unwrap() error { return e.err }

// name is how the operator gave the setting name: lead, at the start of
// a message, is where it came from in full; otherwise its variable, its
// flag, or its config key (after the file's line, unless inFile: the
// message opened with a line of the file).
func (from origins) name(name string, lead, inFile bool) string {
	o, ok := from[name]
	switch {
	case !ok:
		return "--" + name
	case lead || !from.inFile(name):
		return o
	case inFile:
		return flagKey(name)
	}
	at, _, _ := strings.Cut(o, ": ")
	return flagKey(name) + " (" + at + ")"
}

// inFile reports whether the setting name came from the config file.
func (from origins) inFile(name string) bool {
	o, ok := from[name]
	return ok && !strings.HasPrefix(o, "GATEWAY_")
}
