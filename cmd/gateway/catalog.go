package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// gateway catalog: what a model will read of each tool, with where each
// part came from and the guesses an operator should look at, from the
// same flags and config file as serving; nothing is served. The report
// is gateway.Gateway.Report (gateway/report.go); this file only parses
// the command and prints.

// catalogArgs are the catalog command's own arguments.
type catalogArgs struct {
	json    bool
	toolset string
	search  string
	limit   int
	// rest are the gateway's flags.
	rest []string
}

const catalogUsage = `usage: gateway catalog [--json] [--toolset NAME] [search "QUERY" [--limit N]] [gateway flags...]

Prints each tool's name, title, description, hints and size, with where
each came from (proto option, declared, comment, config, verb, structure,
default), and flags the guesses to look at. The gateway's flags and
--config are read as when serving; every backend is discovered once.
search ranks the tools against QUERY with search mode's ranking.
`

// parseCatalogArgs picks the command's own arguments out of args,
// wherever they are, leaving the gateway's flags (and their values) to
// the gateway's parser.
func parseCatalogArgs(args []string, stderr io.Writer) (*catalogArgs, error) {
	fs := (&config{}).flagSet(io.Discard)
	a := &catalogArgs{limit: gateway.DefaultSearchLimit}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		switch {
		case arg == "-h" || arg == "--help" || arg == "-help":
			fmt.Fprint(stderr, catalogUsage)
			return nil, flag.ErrHelp
		case arg == "search":
			if i+1 >= len(args) {
				return nil, errors.New(`catalog search: want a query: gateway catalog search "QUERY"`)
			}
			a.search = args[i+1]
			i++
		case !strings.HasPrefix(arg, "-"):
			return nil, fmt.Errorf("catalog: unexpected argument %q (%s)", arg, strings.SplitN(catalogUsage, "\n", 2)[0])
		case name == "json":
			a.json = true
		case name == "toolset" || name == "limit":
			if !hasValue {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("catalog: --%s needs a value", name)
				}
				value = args[i+1]
				i++
			}
			if name == "toolset" {
				a.toolset = value
				break
			}
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("catalog: --limit: want a whole number of at least 1, got %q", value)
			}
			a.limit = n
		default:
			a.rest = append(a.rest, arg)
			// A flag of the gateway's that takes a value may have it in
			// the next argument.
			if f := fs.Lookup(name); f != nil && !hasValue && !isBoolFlag(f) && i+1 < len(args) {
				a.rest = append(a.rest, args[i+1])
				i++
			}
		}
	}
	return a, nil
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// runCatalog is `gateway catalog`: exit 0 with the report, 1 when the
// catalog cannot be built (a backend not discovered, a tool override
// that does not apply), 2 for a command line or settings that do not
// parse.
func runCatalog(args []string, stdout, stderr io.Writer) int {
	a, err := parseCatalogArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "gateway:", err)
		return 2
	}
	c, err := parseConfig(a.rest, stderr, os.LookupEnv)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "gateway:", err)
		return 2
	}
	// The report is the output: discovery's progress is not, unless
	// asked for (a --log-level given, or GATEWAY_LOG_LEVEL).
	_, fromEnv := os.LookupEnv("GATEWAY_LOG_LEVEL")
	if !fromEnv && c.logLevel == "info" && !slices.ContainsFunc(a.rest, func(s string) bool { return strings.HasPrefix(strings.TrimLeft(s, "-"), "log-level") }) {
		c.logLevel = "warn"
	}
	logger, err := newLogger(c, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "gateway:", err)
		return 2
	}
	ctx := context.Background()
	reports, err := catalogReport(ctx, c, a, logger)
	if err != nil {
		fmt.Fprintln(stderr, "gateway:", c.inSettingWords(err))
		if errors.Is(err, gateway.ErrToolOverride) {
			return 2
		}
		return 1
	}
	if a.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(reports); err != nil {
			fmt.Fprintln(stderr, "gateway:", err)
			return 1
		}
		return 0
	}
	printCatalog(stdout, reports, a.search != "")
	return 0
}

// catalogReport discovers every backend once, as serving would, and
// reports the catalog (or the toolset's, or the search's best).
func catalogReport(ctx context.Context, c *config, a *catalogArgs, logger *slog.Logger) ([]gateway.ToolReport, error) {
	c.backends.setLogger(logger)
	if c.demo {
		d, err := startDemo(ctx, logger)
		if err != nil {
			return nil, err
		}
		defer func() { _ = d.stop() }()
		c.backends.parsed = []backendAddr{{name: "zoo", addr: d.addr}}
	}
	backends, conns, err := c.backends.dial(c.tls)
	for _, conn := range conns {
		defer conn.Close()
	}
	if err != nil {
		return nil, err
	}
	opts := c.catalogOptions(logger)
	// Every backend must be there: a report without one's tools would
	// say nothing of them.
	opts.Catalog.RequireBackends = true
	opts.Catalog.Refresh = 0
	// The report serves nothing: what guards the endpoints is not needed.
	opts.FrontDoor.ToolsetsOnly, opts.FrontDoor.StdioToolset = false, ""
	opts.FrontDoor.Toolsets = append([]gateway.Toolset(nil), opts.FrontDoor.Toolsets...)
	for i := range opts.FrontDoor.Toolsets {
		opts.FrontDoor.Toolsets[i].RequiredScopes = nil
	}
	dctx, cancel := context.WithTimeout(ctx, opts.Catalog.DiscoveryTimeout)
	defer cancel()
	if opts.Catalog.DiscoveryTimeout <= 0 {
		dctx = ctx
	}
	g, err := gateway.New(dctx, backends, &opts)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	if a.search != "" {
		return g.SearchReport(a.toolset, a.search, a.limit)
	}
	return g.Report(a.toolset)
}

// printCatalog prints reports for a person: a block per tool, the
// source of each part in brackets, the guesses under "check".
func printCatalog(w io.Writer, reports []gateway.ToolReport, ranked bool) {
	toCheck := 0
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(w)
		}
		head := r.Name
		if ranked {
			head = fmt.Sprintf("%d. %s (score %.2f)", i+1, r.Name, r.Score)
		}
		fmt.Fprintf(w, "%s\n", head)
		fmt.Fprintf(w, "  method       %s (backend %s), %d bytes listed\n", r.Method, r.Backend, r.Bytes)
		fmt.Fprintf(w, "  name         [%s]\n", r.NameSource)
		fmt.Fprintf(w, "  title        %s [%s]\n", r.Title, r.TitleSource)
		src := string(r.DescriptionSource)
		if r.DescriptionAppended {
			src += " + config"
		}
		fmt.Fprintf(w, "  description  [%s] %s\n", src, indent(r.Description))
		var hints []string
		for _, h := range r.Hints {
			hints = append(hints, fmt.Sprintf("%s=%t [%s]", strings.TrimSuffix(h.Hint, "Hint"), h.Value, h.Source))
		}
		fmt.Fprintf(w, "  hints        %s\n", strings.Join(hints, ", "))
		if len(r.Arguments) > 0 {
			fmt.Fprintf(w, "  arguments    %s\n", strings.Join(r.Arguments, ", "))
		}
		for _, c := range r.Check {
			fmt.Fprintf(w, "  check        %s\n", c)
		}
		if len(r.Check) > 0 {
			toCheck++
		}
	}
	if !ranked {
		fmt.Fprintf(w, "\n%d tools, %d with guesses to check (correct them with tools: in the config file, see docs/curation.md)\n", len(reports), toCheck)
	}
}

// indent lines a multi-line description up under its first line.
func indent(s string) string {
	return strings.ReplaceAll(s, "\n", "\n               ")
}

// checkToolOverrides is --check-config's check of the tool overrides
// against the backends whose descriptors are files alone; the others'
// are checked at discovery, which `gateway catalog` runs.
func checkToolOverrides(c *config, backends []gateway.Backend, stdout io.Writer) error {
	opts := c.catalogOptions(c.opts.Logger)
	checked, err := gateway.CheckToolOverridesOffline(context.Background(), backends, &opts)
	if err != nil {
		return err
	}
	if len(opts.Catalog.Tools) == 0 && len(checked) == 0 {
		return nil
	}
	if len(checked) < len(backends) {
		fmt.Fprintf(stdout, "tool overrides: checked against the descriptor files of %d of %d backends; the others serve reflection and are checked at discovery (run gateway catalog with the same flags)\n", len(checked), len(backends))
	} else if len(checked) > 0 {
		fmt.Fprintf(stdout, "tool overrides: checked against every backend's descriptor files\n")
	}
	return nil
}
