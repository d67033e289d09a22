package main

import (
	"cmp"
	"slices"
	"strings"
)

// Settings given to cmd/gateway are validated here, in the words the
// operator typed (settings.go, validate), before any library sees them,
// so the library's own checks, which name its options for Go callers,
// do not fire for them. What only a running gateway can find (a tool
// scope rule that matches no discovered tool, a tool correction that
// matches nothing, a backend's descriptor files outlasting the
// discovery's deadline, a JWKS that cannot be fetched) is reported by the
// library, in its options' words, after start. inFlagWords restates such
// an error in flag names, from the settings' declarations: each names
// the option it sets (setting.field), so there is no table to keep.

// fileFields are the options set by a section of the config file rather
// than a flag, named as the file names them.
var fileFields = map[string]string{"Options.FrontDoor.Toolsets": "toolsets"}

// optionFlags restates option names as flag names, derived from the
// declarations.
var optionFlags = func() *strings.Replacer {
	type row struct{ field, words string }
	var rows []row
	for _, s := range settings {
		if s.field == "" {
			continue
		}
		// Library log lines name the option and the flag together
		// ("Options.Catalog.DiscoveryTimeout (gateway: --discovery-timeout)");
		// restated, the flag is enough.
		rows = append(rows, row{s.field + " (gateway: --" + s.name + ")", "--" + s.name}, row{s.field, "--" + s.name})
	}
	for field, key := range fileFields {
		rows = append(rows, row{field, key})
	}
	// Longest first, so Options.FrontDoor.ToolsetsOnly is not read as
	// Options.FrontDoor.Toolsets followed by "Only".
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(len(b.field), len(a.field)) })
	var pairs []string
	for _, r := range rows {
		pairs = append(pairs, r.field, r.words)
	}
	return strings.NewReplacer(pairs...)
}()

// inFlagWords returns err, raised by the library after start, restated
// in flag names; errors.Is and As still see the original.
func inFlagWords(err error) error {
	if err == nil {
		return nil
	}
	msg := optionFlags.Replace(err.Error())
	if msg == err.Error() {
		return err
	}
	return &sourcedError{msg: msg, err: err}
}
