package testkit

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/gorilla/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// WebSocketTransport makes gorilla's client a go-sdk client Transport, so
// the reference client drives /ws exactly as it drives the other
// transports: subprotocol "mcp", one JSON-RPC message per text frame.
type WebSocketTransport struct {
	URL    string      // ws://host:port/ws
	Header http.Header // sent with the upgrade request
}

// Connect dials the endpoint and fails unless the server selects "mcp".
func (t *WebSocketTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	d := websocket.Dialer{Subprotocols: []string{"mcp"}}
	c, resp, err := d.DialContext(ctx, t.URL, t.Header)
	if err != nil {
		return nil, err
	}
	if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != "mcp" {
		c.Close()
		return nil, errors.New("server did not select subprotocol mcp: " + got)
	}
	return &wsConn{c: c}, nil
}

type wsConn struct {
	c   *websocket.Conn
	wmu sync.Mutex // gorilla allows one concurrent writer
}

func (w *wsConn) Read(context.Context) (jsonrpc.Message, error) {
	typ, data, err := w.c.ReadMessage()
	if err != nil {
		return nil, err
	}
	if typ != websocket.TextMessage {
		return nil, errors.New("binary frame from server")
	}
	return jsonrpc.DecodeMessage(data)
}

func (w *wsConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return w.c.WriteMessage(websocket.TextMessage, data)
}

func (w *wsConn) Close() error      { return w.c.Close() }
func (w *wsConn) SessionID() string { return "" }
