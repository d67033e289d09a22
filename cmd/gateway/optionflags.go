package main

import (
	"errors"
	"strings"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// Settings given to cmd/gateway are validated here, in the words the
// operator typed (settings.go, validate), before any library sees them,
// so the library's own checks, which name its options for Go callers,
// do not fire for them. What only a running gateway can find (a tool
// scope rule that matches no tool, a backend's descriptor files
// outlasting the discovery's deadline, a JWKS that cannot be fetched)
// the library reports as a *gateway.OptionError naming the option's path;
// each setting's declaration names the option it sets (setting.field),
// so the setting, and where the operator gave it, follow from the
// declarations: there is no table to keep, and no message is rewritten.

// fileSections are the options set by a section of the config file
// rather than by a setting, named as the file names them.
var fileSections = map[string]string{
	"Options.FrontDoor.Toolsets": "toolsets",
	"Options.Catalog.Tools":      "tools",
}

// inSettingWords returns err naming the settings it is about as the
// operator gave them: the config file's line and key, the GATEWAY_*
// variable, or the flag. Two kinds of error carry their settings: the
// library's *gateway.OptionError, naming the option a setting's
// declaration names (setting.field), and cmd/gateway's own settingError,
// naming flags. Any other error is returned as it is; errors.Is and As
// still see the original either way.
func (c *config) inSettingWords(err error) error {
	if oe, where, ok := c.optionOf(err); ok {
		return &sourcedError{msg: where + ": " + oe.Err.Error(), err: err}
	}
	var se *settingError
	if !errors.As(err, &se) {
		return err
	}
	// A message that wraps the setting's error keeps its own words
	// around it.
	outer, _ := strings.CutSuffix(err.Error(), se.Error())
	return &sourcedError{msg: outer + se.in(c.from), err: err}
}

// optionOf is the *gateway.OptionError err holds, when it is about an
// option a setting sets, and where that setting was given, with what of
// the option's path lies below the setting's.
func (c *config) optionOf(err error) (oe *gateway.OptionError, where string, ok bool) {
	if !errors.As(err, &oe) {
		return nil, "", false
	}
	where, rest, ok := c.settingOf(oe.Option)
	return oe, where + rest, ok
}

// about is err, found by cmd/gateway itself about the value of the
// setting flag (by the library's rule, as grpcmeta.CheckForwardHeader
// and gateway.ParseMetadata are, or about a form only the command reads,
// such as RULE=SCOPE), as the library reports an option's error: a
// *gateway.OptionError on the option the setting's declaration names, so
// that inSettingWords names it as the operator gave the setting.
func about(flag string, err error) error {
	return &gateway.OptionError{Option: declared(flag).field, Err: err}
}

// settingOf is where the setting behind option was given, and what of
// option's path lies below the setting's own
// ("Options.FrontDoor.Toolsets[1].Name": "toolsets", "[1].Name").
func (c *config) settingOf(option string) (where, rest string, ok bool) {
	best := -1
	for i := range settings {
		f := settings[i].field
		if f != "" && under(option, f) && (best < 0 || len(f) > len(settings[best].field)) {
			best = i
		}
	}
	if best >= 0 {
		s := &settings[best]
		where, ok = c.from[s.name]
		if !ok {
			where = "--" + s.name
		}
		return where, option[len(s.field):], true
	}
	for field, key := range fileSections {
		if under(option, field) {
			return key, option[len(field):], true
		}
	}
	return "", "", false
}

// under reports whether option is field or a part of it (an element,
// a field of it).
func under(option, field string) bool {
	rest, ok := strings.CutPrefix(option, field)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}
