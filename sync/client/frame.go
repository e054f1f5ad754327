package client

import (
	"fmt"
	"time"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint/sync"
)

// writeWait bounds one write to the cloud, a frame or a ping.
const writeWait = 30 * time.Second

func writeFrame(conn *websocket.Conn, f *sync.Frame) error {
	b, err := sync.Encode(f)
	if err != nil {
		return err
	}
	conn.SetWriteDeadline(time.Now().Add(writeWait))
	if err := conn.WriteMessage(websocket.TextMessage, b); err != nil {
		return fmt.Errorf("send %s: %w", f.Type, err)
	}
	return nil
}

func readFrame(conn *websocket.Conn) (*sync.Frame, error) {
	typ, b, err := conn.ReadMessage()
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if typ != websocket.TextMessage {
		return nil, fmt.Errorf("read: unexpected message type %d", typ)
	}
	return sync.Decode(b)
}
