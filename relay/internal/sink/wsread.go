package sink

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// FrameReader reads the client's frames on a connection the relay owns
// (RFC 6455 5): it answers pings, answers the close frame, and hands back
// whole data messages. Nothing is negotiated at the handshake (no
// compression, no extension), so every reserved bit must be clear, and a
// client masks every frame (5.3).
type FrameReader struct {
	k     *Frames
	br    *bufio.Reader
	limit int64
	head  [8]byte
}

// NewReader reads the client's frames from br, messages of at most limit
// bytes, answering through k.
func (k *Frames) NewReader(br *bufio.Reader, limit int64) *FrameReader {
	return &FrameReader{k: k, br: br, limit: limit}
}

// errProtocol is a frame no client may send.
var errProtocol = errors.New("relay: websocket protocol error")

// ReadMessage returns the next data message. A close frame from the client
// is answered and returned as a websocket.CloseError (websocket.CloseStatus
// reads its code); a frame that breaks the protocol or the limit closes
// the connection's write side with the matching status.
func (r *FrameReader) ReadMessage() (websocket.MessageType, []byte, error) {
	var (
		msg    []byte
		typ    websocket.MessageType
		inData bool
	)
	for {
		fin, op, payload, err := r.frame()
		if err != nil {
			return 0, nil, err
		}
		switch op {
		case opPing:
			if err := r.k.pong(payload); err != nil {
				return 0, nil, err
			}
			continue
		case opPong:
			continue
		case opClose:
			return 0, nil, r.closed(payload)
		case opText, opBinary:
			if inData {
				return 0, nil, r.fail(websocket.StatusProtocolError, "a new message inside a fragmented one")
			}
			inData, typ = true, websocket.MessageText
			if op == opBinary {
				typ = websocket.MessageBinary
			}
		case opContinuation:
			if !inData {
				return 0, nil, r.fail(websocket.StatusProtocolError, "a continuation frame outside a message")
			}
		default:
			return 0, nil, r.fail(websocket.StatusProtocolError, fmt.Sprintf("unknown opcode %d", op))
		}
		if int64(len(msg))+int64(len(payload)) > r.limit {
			return 0, nil, r.fail(websocket.StatusMessageTooBig, fmt.Sprintf("a message over %d bytes", r.limit))
		}
		msg = append(msg, payload...)
		if fin {
			if typ == websocket.MessageText && !utf8.Valid(msg) {
				return 0, nil, r.fail(websocket.StatusInvalidFramePayloadData, "a text message that is not UTF-8")
			}
			return typ, msg, nil
		}
	}
}

// frame reads one frame and unmasks its payload.
func (r *FrameReader) frame() (fin bool, op byte, payload []byte, err error) {
	if _, err := io.ReadFull(r.br, r.head[:2]); err != nil {
		return false, 0, nil, err
	}
	b0, b1 := r.head[0], r.head[1]
	fin, op = b0&finBit != 0, b0&0x0f
	if b0&0x70 != 0 {
		return false, 0, nil, r.fail(websocket.StatusProtocolError, "reserved bits set")
	}
	if b1&0x80 == 0 {
		return false, 0, nil, r.fail(websocket.StatusProtocolError, "an unmasked client frame")
	}
	n := uint64(b1 & 0x7f)
	switch n {
	case 126:
		if _, err := io.ReadFull(r.br, r.head[:2]); err != nil {
			return false, 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(r.head[:2]))
	case 127:
		if _, err := io.ReadFull(r.br, r.head[:8]); err != nil {
			return false, 0, nil, err
		}
		n = binary.BigEndian.Uint64(r.head[:8])
	}
	if op >= opClose && (!fin || n > 125) {
		return false, 0, nil, r.fail(websocket.StatusProtocolError, "a fragmented or long control frame")
	}
	if n > uint64(r.limit) {
		return false, 0, nil, r.fail(websocket.StatusMessageTooBig, fmt.Sprintf("a frame over %d bytes", r.limit))
	}
	var mask [4]byte
	if _, err := io.ReadFull(r.br, mask[:]); err != nil {
		return false, 0, nil, err
	}
	if payload, err = readPayload(r.br, int(n)); err != nil {
		return false, 0, nil, err
	}
	for i := range payload {
		payload[i] ^= mask[i&3]
	}
	return fin, op, payload, nil
}

// payloadStep is how much of a frame's payload is allocated ahead of the
// bytes that fill it.
const payloadStep = 16 << 10

// readPayload reads a payload of n bytes, allocating as its bytes arrive
// (at most payloadStep, or twice what came, ahead of them), never on the
// header's word alone: a client that declares a megabyte and sends
// nothing holds none of the relay's memory for it (from a buffered
// reader, nothing is allocated before the payload's first byte), and one
// that sends a byte holds 16 KiB, not a megabyte.
func readPayload(r io.Reader, n int) ([]byte, error) {
	if br, ok := r.(*bufio.Reader); ok && n > 0 {
		if _, err := br.Peek(1); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, min(n, payloadStep))
	for len(b) < n {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(n-len(b), max(len(b), payloadStep)))
		}
		m, err := io.ReadFull(r, b[len(b):min(n, cap(b))])
		b = b[:len(b)+m]
		if err == io.EOF && len(b) > 0 {
			err = io.ErrUnexpectedEOF // as one io.ReadFull of the whole would say
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// closed answers the client's close frame with its code (5.5.1) and
// returns it as an error.
func (r *FrameReader) closed(payload []byte) error {
	ce := websocket.CloseError{Code: websocket.StatusNoStatusRcvd}
	if len(payload) >= 2 {
		ce.Code = websocket.StatusCode(binary.BigEndian.Uint16(payload))
		ce.Reason = string(payload[2:])
	}
	reply := ce.Code
	if reply == websocket.StatusNoStatusRcvd {
		reply = websocket.StatusNormalClosure
	}
	r.k.WriteClose(reply, "")
	return ce
}

// fail closes with code and returns the protocol error.
func (r *FrameReader) fail(code websocket.StatusCode, why string) error {
	r.k.WriteClose(code, why)
	return fmt.Errorf("%w: %s", errProtocol, why)
}
