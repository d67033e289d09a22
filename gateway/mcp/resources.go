package mcp

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
)

// Resources (resources/list, resources/read, resources/templates/list and
// notifications/resources/list_changed).
//
// They are optional: a Handler that also implements ResourceHandler gets
// them, and the server advertises the resources capability (with
// listChanged) in initialize and server/discover; any other Handler
// answers those methods with -32601, as before. Subscriptions to one
// resource's updates (resources/subscribe) are not offered: a change to a
// resource is announced as a list change.

// Resource describes one resource in resources/list.
type Resource struct {
	URI         string
	Name        string
	Title       string // sent from 2025-06-18 on
	Description string
	MIMEType    string
}

// ResourceContents is what resources/read returns for one URI. Only text
// contents exist for now.
type ResourceContents struct {
	URI      string
	MIMEType string
	Text     string
	// Private marks contents only this caller may see: at 2026-07-28 the
	// read result says cacheScope "private" instead of "public".
	Private bool
	// TTL, when positive, is the 2026-07-28 ttlMs of the read result
	// instead of the resource set's: how long the contents stay valid.
	TTL time.Duration
}

// ReadResourceRequest is one resources/read as the handler sees it.
type ReadResourceRequest struct {
	URI string
	// Header holds the HTTP request headers, nil on stdio. Read-only.
	Header http.Header
	// Session describes the connection the request arrived on; Key is
	// empty for stateless requests.
	Session SessionInfo
}

// ErrResourceNotFound is returned, wrapped or not, by ReadResource for a
// URI it does not serve. The server answers it with the protocol's
// resource-not-found error: -32602 at 2026-07-28 (where the spec made it
// invalid params), -32002 at older revisions; the error's data names the
// URI.
var ErrResourceNotFound = errors.New("resource not found")

// CodeResourceNotFound is the resource-not-found code of the revisions
// before 2026-07-28.
const CodeResourceNotFound = -32002

// ResourceHandler is implemented by a Handler that serves resources.
// Implementations must be safe for concurrent use.
type ResourceHandler interface {
	// Resources returns the current immutable resource set; called per
	// resources/list, so it must be cheap (an atomic load).
	Resources() *ResourceSet
	// ReadResource serves resources/read. An unknown URI is
	// ErrResourceNotFound; an *Error answers with that error; any other
	// error answers -32603 and is logged.
	ReadResource(ctx context.Context, req *ReadResourceRequest) (*ResourceContents, error)
}

// ResourceSet is an immutable snapshot of the resources, in the order
// given, with every resources/list page encoded once (per revision family)
// at construction, like ToolList.
type ResourceSet struct {
	list []Resource
	// pages[withTitle][i] is the result object of page i, without the
	// 2026-07-28 members; pages2026[i] with them.
	pages     [2][][]byte
	pages2026 [][]byte
	cursors   map[string]int
	ttlMs     int64 // also the caching hint of resources/read at 2026-07-28
}

// ResourceSetOptions tunes a ResourceSet; nil means defaults.
type ResourceSetOptions struct {
	// PageSize is the number of resources per page; default 100.
	PageSize int
	// TTL is the ttlMs of 2026-07-28 list results; default 60s, negative
	// sends 0.
	TTL time.Duration
}

// NewResourceSet checks resources (unique non-empty URIs, non-empty
// names) and encodes the list pages.
func NewResourceSet(resources []Resource, opts *ResourceSetOptions) (*ResourceSet, error) {
	o := ResourceSetOptions{PageSize: 100, TTL: time.Minute}
	if opts != nil {
		if opts.PageSize > 0 {
			o.PageSize = opts.PageSize
		}
		if opts.TTL != 0 {
			o.TTL = opts.TTL
		}
	}
	s := &ResourceSet{list: append([]Resource(nil), resources...), cursors: make(map[string]int)}
	seen := make(map[string]bool, len(resources))
	enc := make([][2][]byte, len(resources))
	h := fnv.New64a()
	for i, r := range resources {
		if r.URI == "" || r.Name == "" {
			return nil, fmt.Errorf("mcp: resource set: resource %d needs a URI and a name", i)
		}
		if seen[r.URI] {
			return nil, fmt.Errorf("mcp: resource set: duplicate URI %q", r.URI)
		}
		seen[r.URI] = true
		enc[i][0] = encodeResource(r, false)
		enc[i][1] = encodeResource(r, true)
		h.Write(enc[i][1])
		h.Write([]byte{0})
	}
	gen := h.Sum64()
	n := len(resources)
	npages := max((n+o.PageSize-1)/o.PageSize, 1)
	cursors := make([]string, npages)
	for p := 1; p < npages; p++ {
		var raw [12]byte
		binary.BigEndian.PutUint64(raw[:8], gen)
		binary.BigEndian.PutUint32(raw[8:], uint32(p*o.PageSize))
		cursors[p] = base64.RawURLEncoding.EncodeToString(raw[:])
		s.cursors[cursors[p]] = p
	}
	ttl := max(o.TTL.Milliseconds(), 0)
	s.ttlMs = ttl
	for p := range npages {
		lo, hi := p*o.PageSize, min((p+1)*o.PageSize, n)
		for withTitle := range 2 {
			b := []byte(`{"resources":[`)
			for i := lo; i < hi; i++ {
				if i > lo {
					b = append(b, ',')
				}
				b = append(b, enc[i][withTitle]...)
			}
			b = append(b, ']')
			if p+1 < npages {
				b = append(b, `,"nextCursor":`...)
				b = appendString(b, cursors[p+1])
			}
			// Clipped, so the 2026-07-28 page appended next gets its own array.
			s.pages[withTitle] = append(s.pages[withTitle], append(slices.Clip(b), '}'))
			if withTitle == 1 {
				b = append(b, `,"ttlMs":`...)
				b = strconv.AppendInt(b, ttl, 10)
				b = append(b, `,"cacheScope":"public","resultType":"complete"}`...)
				s.pages2026 = append(s.pages2026, b)
			}
		}
	}
	return s, nil
}

func encodeResource(r Resource, withTitle bool) []byte {
	b := []byte(`{"uri":`)
	b = appendString(b, r.URI)
	b = append(b, `,"name":`...)
	b = appendString(b, r.Name)
	if withTitle && r.Title != "" {
		b = append(b, `,"title":`...)
		b = appendString(b, r.Title)
	}
	if r.Description != "" {
		b = append(b, `,"description":`...)
		b = appendString(b, r.Description)
	}
	if r.MIMEType != "" {
		b = append(b, `,"mimeType":`...)
		b = appendString(b, r.MIMEType)
	}
	return append(b, '}')
}

// Resources returns a copy of the resources in list order.
func (s *ResourceSet) Resources() []Resource {
	if s == nil {
		return nil
	}
	return append([]Resource(nil), s.list...)
}

// page returns the encoded result for cursor ("" is the first page).
func (s *ResourceSet) page(version, cursor string) ([]byte, bool) {
	p := 0
	if cursor != "" {
		if s == nil {
			return nil, false
		}
		var ok bool
		if p, ok = s.cursors[cursor]; !ok {
			return nil, false
		}
	}
	if s == nil {
		if isStateless(version) {
			return []byte(`{"resources":[],"ttlMs":0,"cacheScope":"public","resultType":"complete"}`), true
		}
		return []byte(`{"resources":[]}`), true
	}
	switch {
	case isStateless(version):
		return s.pages2026[p], true
	case version >= Version20250618:
		return s.pages[1][p], true
	}
	return s.pages[0][p], true
}

// resourceMethod serves the resources/* methods for both the handshake
// revisions and 2026-07-28. A handler without resources gets -32601.
func (s *Server) resourceMethod(ctx context.Context, sess *session, sc *scope, m *message, p *params, version string, b []byte) reply {
	fail := func(e *Error) reply { return reply{appendError(b, m.ID, e), e.Code} }
	rh, ok := s.h.(ResourceHandler)
	if !ok {
		return fail(errorf(CodeMethodNotFound, "method %q not found", m.method))
	}
	var body []byte
	switch m.info.handler {
	case serveResourcesList:
		cursor := ""
		if p.Cursor != nil && string(p.Cursor) != "null" {
			if cursor, ok = jsonscan.Unquote(p.Cursor); !ok {
				return fail(errorf(CodeInvalidParams, "%s: params.cursor must be a string", m.method))
			}
		}
		if body, ok = rh.Resources().page(version, cursor); !ok {
			return fail(errorf(CodeInvalidParams, "%s: invalid or expired cursor", m.method))
		}
	case serveResourcesTemplatesList:
		body = []byte(`{"resourceTemplates":[]}`)
		if isStateless(version) {
			body = []byte(`{"resourceTemplates":[],"ttlMs":0,"cacheScope":"public","resultType":"complete"}`)
		}
	case serveResourcesRead:
		uri, ok := jsonscan.Unquote(p.URI)
		if p.URI == nil || !ok || uri == "" {
			return fail(errorf(CodeInvalidParams, "%s: params.uri must be a non-empty string", m.method))
		}
		if isStateless(version) && sc.checkHeader && sc.header != nil {
			switch hn := headerValue(sc.header, "Mcp-Name"); {
			case hn == "":
				return fail(errorf(CodeHeaderMismatch, "missing required Mcp-Name header for %s", m.method))
			case hn != uri:
				return fail(errorf(CodeHeaderMismatch, "Mcp-Name header %q does not match params.uri %q", hn, uri))
			}
		}
		req := &ReadResourceRequest{URI: uri, Header: sc.header, Session: SessionInfo{Transport: sc.transport, ProtocolVersion: version}}
		if sess != nil {
			req.Session.ID, req.Session.Key = sess.id, sess.key
		}
		rc, err := rh.ReadResource(ctx, req)
		if err != nil {
			var e *Error
			switch {
			case errors.Is(err, ErrResourceNotFound):
				code := int64(CodeResourceNotFound)
				if isStateless(version) {
					code = CodeInvalidParams
				}
				data := append(appendString([]byte(`{"uri":`), uri), '}')
				return fail(&Error{Code: code, Message: "resource not found: " + uri, Data: data})
			case errors.As(err, &e):
				return fail(e)
			case errors.Is(err, ErrFleetUnavailable):
				// The handler's message says what to do (retry shortly)
				// and holds no more than the URI the client sent.
				return fail(errorf(CodeInternalError, "%s: %v", m.method, err))
			}
			s.log.Error("mcp: "+m.method+" failed", "uri", uri, "err", err)
			return fail(errorf(CodeInternalError, "internal error"))
		}
		body = []byte(`{"contents":[{"uri":`)
		body = appendString(body, rc.URI)
		if rc.MIMEType != "" {
			body = append(body, `,"mimeType":`...)
			body = appendString(body, rc.MIMEType)
		}
		body = append(body, `,"text":`...)
		body = appendString(body, rc.Text)
		body = append(body, "}]"...)
		if isStateless(version) {
			// SEP-2549: resources/read is cacheable like the lists; a
			// resource changes only when the set does, so it shares their TTL.
			var ttl int64
			if rs := rh.Resources(); rs != nil {
				ttl = rs.ttlMs
			}
			if rc.TTL > 0 {
				ttl = rc.TTL.Milliseconds()
			}
			body = append(body, `,"ttlMs":`...)
			body = strconv.AppendInt(body, ttl, 10)
			if rc.Private {
				body = append(body, `,"cacheScope":"private","resultType":"complete"`...)
			} else {
				body = append(body, `,"cacheScope":"public","resultType":"complete"`...)
			}
		}
		body = append(body, '}')
	}
	b = appendResultHead(b, m.ID)
	if isStateless(version) {
		b = appendWithMeta(b, body, s.serverInfo)
	} else {
		b = append(b, body...)
	}
	return reply{append(b, '}'), 0}
}

// resourceListChangedMsg is the notification on the session streams; the
// 2026-07-28 listen stream adds its subscription id.
var resourceListChangedMsg = []byte(notificationHead + notificationResourcesListChanged + `"}`)

// NotifyResourceListChanged tells every live stream that can receive it
// that resources/list changed, like NotifyToolListChanged. It never blocks.
func (s *Server) NotifyResourceListChanged() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		if l.notify != nil {
			l.notify(resourceListChangedMsg, true)
			continue
		}
		select {
		case l.resources <- struct{}{}:
		default:
		}
	}
}
