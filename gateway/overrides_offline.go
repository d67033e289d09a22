package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/overrides"
)

// CheckToolOverridesOffline checks opts.Catalog.Tools and the toolsets' Tools
// against the methods of the backends whose descriptors are files alone
// (NoReflection with Files), as discovery would, without connecting to
// any backend: --check-config's check. checked names those backends;
// when they are all the backends, a rule that matches no method is an
// error too. A backend that serves reflection is checked at discovery
// (New, or `gateway catalog`).
func CheckToolOverridesOffline(ctx context.Context, backends []Backend, opts *Options) (checked []string, err error) {
	if opts == nil || len(opts.Catalog.Tools) == 0 && !slices.ContainsFunc(opts.FrontDoor.Toolsets, func(ts Toolset) bool { return len(ts.Tools) > 0 }) {
		return nil, nil
	}
	rules, err := overrides.Compile("Options.Catalog.Tools", opts.Catalog.Tools)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrToolOverride, err)
	}
	filter, err := newMethodFilter("Options.Catalog", opts.Catalog.Include, opts.Catalog.Exclude)
	if err != nil {
		return nil, err
	}
	matched := make(map[int]bool)
	resolved := make(map[overrides.ArgKey]bool)
	var tools []*compiled.Tool
	for _, b := range backends {
		if !b.NoReflection || b.Files == nil || b.Source != nil {
			continue
		}
		res, err := b.Files.Discover(ctx)
		if err != nil {
			return checked, fmt.Errorf("backend %s: %w", b.Name, err)
		}
		settings, err := newBackendSettings(b)
		if err != nil {
			return checked, fmt.Errorf("backend %s: %w", b.Name, err)
		}
		bt, err := compiled.Compile(b.Name, res, b.Conn, compiled.Options{
			ExposeHealth: opts.Catalog.ExposeHealth, ExposeInternal: opts.Catalog.ExposeInternal, UseProtoNames: opts.Catalog.UseProtoNames,
			Exposes: exposer(filter, settings), Logger: slog.New(slog.DiscardHandler), Overrides: rules,
			Settle: settings.settler(deadlines{call: DefaultCallTimeout, stream: time.Minute}), MD: settings.metadata(), MaxResultBytes: -1,
		})
		if err != nil {
			return checked, fmt.Errorf("backend %s: %w", b.Name, err)
		}
		for i := range bt.MatchedRules {
			matched[i] = true
		}
		for k := range bt.ResolvedArgs {
			resolved[k] = true
		}
		tools = append(tools, bt.Tools...)
		checked = append(checked, b.Name)
	}
	complete := len(checked) == len(backends)
	var un []string
	if complete {
		un = rules.Unmatched(matched, resolved)
	}
	for i, ts := range opts.FrontDoor.Toolsets {
		tr, err := overrides.Compile(fmt.Sprintf("Options.FrontDoor.Toolsets[%d].Tools", i), ts.Tools)
		if err != nil {
			return checked, fmt.Errorf("%w: %w", ErrToolOverride, err)
		}
		if tr == nil {
			continue
		}
		tf, _ := newMethodFilter("", ts.Include, ts.Exclude)
		tm := make(map[int]bool)
		tres := make(map[overrides.ArgKey]bool)
		for _, t := range tools {
			if !tf.matchPath(t.Call.Method[1:]) {
				continue
			}
			if _, err := compiled.ToolsetCopy(tr, t, opts.Catalog.UseProtoNames, tm, tres); err != nil {
				return checked, fmt.Errorf("toolset %s: %w", ts.Name, err)
			}
		}
		if complete {
			un = append(un, tr.Unmatched(tm, tres)...)
		}
	}
	if len(un) > 0 {
		return checked, fmt.Errorf("%w: %s", ErrToolOverride, strings.Join(un, "; "))
	}
	return checked, nil
}
