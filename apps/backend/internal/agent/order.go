package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"
)

// The ACP library handles an agent's session/update notifications one
// after another on one goroutine, but starts each inbound request on a
// goroutine of its own at once. A permission request can therefore be
// handled before the message chunks the agent wrote ahead of it are
// recorded, and the recording would split or misorder the agent's text.
// The ordering reader notes, for each permission request as it is read
// off the agent's stdout, how many session/update notifications came
// before it; the request's handler waits (bounded) until that many were
// processed.

// maxOrderWait bounds how long a permission request waits for the
// updates before it (an update the library drops is never processed).
const maxOrderWait = 2 * time.Second

// maxOrderPending bounds the permission requests remembered at once.
const maxOrderPending = 64

// updateOrder counts the session/update notifications read and processed.
type updateOrder struct {
	mu        sync.Mutex
	read      uint64            // notifications read off stdout
	processed uint64            // notifications handed to SessionUpdate
	before    map[string]uint64 // permission request's tool call id -> updates read before it
	changed   chan struct{}     // closed and replaced when processed grows
}

func newUpdateOrder() *updateOrder {
	return &updateOrder{before: map[string]uint64{}, changed: make(chan struct{})}
}

// maxOrderDrain bounds how long, after the agent exited, the ordering
// reader waits for the library to read the rest of its output.
const maxOrderDrain = 5 * time.Second

// reader returns stdout with every line it passes on classified. Once
// exited is closed, the library has maxOrderDrain to read what is left.
func (o *updateOrder) reader(stdout io.Reader, exited <-chan struct{}) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		<-exited
		time.Sleep(maxOrderDrain)
		_ = pr.CloseWithError(io.ErrClosedPipe)
	}()
	go func() {
		br := bufio.NewReaderSize(stdout, 64*1024)
		for {
			line, err := br.ReadSlice('\n')
			if len(line) > 0 {
				if err == nil {
					o.classify(line)
				}
				if _, werr := pw.Write(line); werr != nil {
					_ = pw.CloseWithError(werr)
					return
				}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				// A line longer than the buffer: not classified (no
				// update the barrier would wait for), passed on whole.
				continue
			}
			if err != nil {
				_ = pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

var (
	methodUpdate     = []byte(`session/update`)
	methodPermission = []byte(`session/request_permission`)
)

// classify counts a session/update notification, or remembers a
// permission request's place among them.
func (o *updateOrder) classify(line []byte) {
	isUpdate, isPermission := bytes.Contains(line, methodUpdate), bytes.Contains(line, methodPermission)
	if !isUpdate && !isPermission {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ToolCall struct {
				ToolCallID string `json:"toolCallId"`
			} `json:"toolCall"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case m.Method == "session/update" && len(m.ID) == 0:
		o.read++
	case m.Method == "session/request_permission" && len(m.ID) > 0 && m.Params.ToolCall.ToolCallID != "":
		if len(o.before) < maxOrderPending {
			o.before[m.Params.ToolCall.ToolCallID] = o.read
		}
	}
}

// processedOne records that SessionUpdate handled a notification.
func (o *updateOrder) processedOne() {
	o.mu.Lock()
	o.processed++
	close(o.changed)
	o.changed = make(chan struct{})
	o.mu.Unlock()
}

// waitBefore waits until the updates read before the permission request
// for toolCallID are processed, at most maxOrderWait or until ctx ends.
func (o *updateOrder) waitBefore(ctx context.Context, toolCallID string) {
	o.mu.Lock()
	target, ok := o.before[toolCallID]
	delete(o.before, toolCallID)
	o.mu.Unlock()
	if !ok {
		return
	}
	timer := time.NewTimer(maxOrderWait)
	defer timer.Stop()
	for {
		o.mu.Lock()
		done, changed := o.processed >= target, o.changed
		o.mu.Unlock()
		if done {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}
