package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The headers of a webhook delivery. The signature is
// "sha256=" + hex(HMAC-SHA256(secret, timestamp + "." + body)), so a
// receiver that checks it and refuses a timestamp older than a few
// minutes refuses a replayed request; DeliveryHeader is the same on
// every retry of one delivery (for receivers that deduplicate).
const (
	SignatureHeader = "X-Kandev-Signature"
	TimestampHeader = "X-Kandev-Timestamp"
	DeliveryHeader  = "X-Kandev-Delivery"
	EventHeader     = "X-Kandev-Event"
)

// maxReply bounds how much of a receiver's reply is read (and discarded).
const maxReply = 4 << 10

// Payload is the JSON body of a webhook delivery.
type Payload struct {
	DeliveryID   string              `json:"delivery_id"`
	Event        string              `json:"event"`
	Notification kanban.Notification `json:"notification"`
	SentAt       time.Time           `json:"sent_at"`
}

// Sign returns the signature header's value of body sent at timestamp
// (Unix seconds, as in TimestampHeader) with secret.
func Sign(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// webhook POSTs the notification, signed. 2xx delivers; 408, 429, 5xx
// and transport errors may succeed later; other statuses (a redirect
// included: none is followed) do not.
func (n *Notifier) webhook(ctx context.Context, j job, deliveryID string) outcome {
	now := time.Now().UTC()
	body, err := json.Marshal(Payload{DeliveryID: deliveryID, Event: string(j.n.Kind), Notification: j.n, SentAt: now})
	if err != nil || len(body) > kanban.MaxWebhookBody {
		return outcome{err: fmt.Errorf("the payload is larger than %d bytes", kanban.MaxWebhookBody)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.ch.URL.Reveal(), bytes.NewReader(body))
	if err != nil {
		return outcome{err: errors.New("the webhook URL is not usable")}
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "kandev-notify")
	req.Header.Set(TimestampHeader, ts)
	req.Header.Set(SignatureHeader, Sign(j.ch.Secret.Reveal(), ts, body))
	req.Header.Set(DeliveryHeader, deliveryID)
	req.Header.Set(EventHeader, string(j.n.Kind))
	resp, err := n.cfg.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return outcome{retry: true, err: errors.New("the receiver did not answer in time")}
		}
		return outcome{retry: true, err: errors.New("the receiver could not be reached")}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxReply))
	_ = resp.Body.Close()
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return outcome{status: code}
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		return outcome{status: code, retry: true, err: fmt.Errorf("the receiver answered %d", code)}
	}
	return outcome{status: code, err: fmt.Errorf("the receiver refused the delivery (%d)", code)}
}
