// Package notify tells an operator that a decision waits for them: a
// decorator around an audit.Log that, after a REQUIRE_CONFIRMATION
// decision is on record, POSTs a signed JSON notice to a webhook.
//
// The gate never waits for it and never fails because of it: Record
// hands the notice to a bounded queue and returns; one worker sends the
// queue in order, retrying with backoff; when the queue is full a notice
// is dropped and the running count of drops is logged. A receiver that is
// down, slow or failing therefore delays no answer and changes none.
//
// Each POST carries two headers:
//
//	X-EWP-Timestamp: 1764633600            (Unix seconds, when it was signed)
//	X-EWP-Signature: sha256=<hex>          (HMAC-SHA256 with the shared secret
//	                                        over the timestamp, ".", and the body)
//
// A receiver recomputes the HMAC over the same bytes with its copy of the
// secret, compares in constant time (Verify does both) and refuses a
// timestamp far from its clock, so an old notice cannot be replayed.
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// Header names of a notice's signature.
const (
	HeaderTimestamp = "X-EWP-Timestamp"
	HeaderSignature = "X-EWP-Signature"
	// signaturePrefix names the MAC in the signature header's value.
	signaturePrefix = "sha256="
)

// Defaults of Config's zero fields.
const (
	DefaultQueueSize   = 256
	DefaultMaxAttempts = 6
	DefaultTimeout     = 10 * time.Second
	// DefaultBackoffBase is the wait after the first failed attempt; it
	// doubles each time, up to DefaultBackoffMax.
	DefaultBackoffBase = time.Second
	DefaultBackoffMax  = 5 * time.Minute
)

// Config says where notices go and how.
type Config struct {
	URL    string
	Secret []byte // the HMAC key; required, never logged
	Format Format // FormatGeneric when empty
	// QueueSize bounds the notices waiting to be sent; beyond it new
	// ones are dropped (and counted).
	QueueSize int
	// MaxAttempts is how often one notice is tried before it is given up.
	MaxAttempts int
	// Timeout bounds one attempt (connect, send and read the status).
	Timeout time.Duration
	// Backoff is the wait before attempt n+1 after n failed ones (n ≥ 1);
	// default DefaultBackoffBase doubled per failure, capped at
	// DefaultBackoffMax. Sleep waits it (tests inject both); it returns
	// early with ctx's error when the notifier closes.
	Backoff func(failed int) time.Duration
	Sleep   func(ctx context.Context, d time.Duration) error
	Now     func() time.Time
	Client  *http.Client
	Logger  *slog.Logger
}

// Notifier sends notices from its queue until Close.
type Notifier struct {
	cfg     Config
	queue   chan *audit.Decision
	dropped atomic.Int64
	cancel  context.CancelFunc
	done    chan struct{}
	close   sync.Once
}

// New checks cfg and starts the notifier's worker.
func New(cfg Config) (*Notifier, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Notifier{cfg: cfg, queue: make(chan *audit.Decision, cfg.QueueSize), cancel: cancel, done: make(chan struct{})}
	go n.run(ctx)
	return n, nil
}

func (c *Config) fill() error {
	switch {
	case c.URL == "":
		return errors.New("notify: the webhook URL is empty")
	case len(c.Secret) == 0:
		return errors.New("notify: the signing secret is empty; every notice is signed")
	}
	if _, err := ParseFormat(string(c.Format)); err != nil {
		return err
	}
	if c.Format == "" {
		c.Format = FormatGeneric
	}
	if c.QueueSize <= 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Backoff == nil {
		c.Backoff = ExponentialBackoff(DefaultBackoffBase, DefaultBackoffMax)
	}
	if c.Sleep == nil {
		c.Sleep = sleep
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Client == nil {
		// No redirects: a signed notice goes where the operator said.
		c.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}

// ExponentialBackoff waits base after the first failure, doubling per
// failure up to most.
func ExponentialBackoff(base, most time.Duration) func(int) time.Duration {
	return func(failed int) time.Duration {
		d := base
		for i := 1; i < failed && d < most; i++ {
			d *= 2
		}
		return min(d, most)
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Enqueue hands d to the worker without waiting: when the queue is full
// d is dropped and the drop counted and logged. It reports whether d was
// queued.
func (n *Notifier) Enqueue(d *audit.Decision) bool {
	select {
	case n.queue <- d:
		return true
	default:
		total := n.dropped.Add(1)
		n.cfg.Logger.Warn("notification queue full: a pending decision's notice was dropped (see the inbox: ewp-audit list --pending)",
			"decision_id", d.ID, "dropped_total", total, "queue", n.cfg.QueueSize)
		return false
	}
}

// Dropped is how many notices were dropped because the queue was full.
func (n *Notifier) Dropped() int64 { return n.dropped.Load() }

// Close stops the worker: a notice being retried is given up, and those
// still queued are not sent (their count is logged).
func (n *Notifier) Close() {
	n.close.Do(func() {
		n.cancel()
		<-n.done
		if left := len(n.queue); left > 0 {
			n.cfg.Logger.Warn("notifier closed with notices unsent", "unsent", left)
		}
	})
}

func (n *Notifier) run(ctx context.Context) {
	defer close(n.done)
	for {
		select {
		case <-ctx.Done():
			return
		case d := <-n.queue:
			n.deliver(ctx, d)
		}
	}
}

// deliver tries one notice up to MaxAttempts times, waiting Backoff
// between attempts; a 4xx other than 408 and 429 is final (the receiver
// refuses this notice; sending it again would not change that).
func (n *Notifier) deliver(ctx context.Context, d *audit.Decision) {
	body, err := Payload(n.cfg.Format, d)
	if err != nil {
		n.cfg.Logger.Error("notification not built", "decision_id", d.ID, "err", err)
		return
	}
	for attempt := 1; ; attempt++ {
		retry, err := n.post(ctx, body)
		if err == nil {
			return
		}
		if !retry || attempt >= n.cfg.MaxAttempts {
			n.cfg.Logger.Warn("notification not delivered; given up", "decision_id", d.ID, "attempts", attempt, "err", err)
			return
		}
		wait := n.cfg.Backoff(attempt)
		n.cfg.Logger.Info("notification not delivered; retrying", "decision_id", d.ID, "attempt", attempt, "retry_in", wait, "err", err)
		if n.cfg.Sleep(ctx, wait) != nil {
			return
		}
	}
}

// post sends body once; retry says whether another attempt may succeed.
func (n *Notifier) post(ctx context.Context, body []byte) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	ts := strconv.FormatInt(n.cfg.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ewp-mcp-notify")
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, Sign(n.cfg.Secret, ts, body))
	resp, err := n.cfg.Client.Do(req)
	if err != nil {
		return true, redactURL(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("the webhook answered %s", resp.Status)
	}
	return false, fmt.Errorf("the webhook answered %s (not retried: fix the receiver or --notify-url)", resp.Status)
}

// redactURL drops the URL from a transport error: a Slack or Teams
// webhook URL is itself a credential and must not reach the log.
func redactURL(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return errors.New("posting to the webhook failed")
	}
	if ue.Timeout() {
		return errors.New("the webhook did not answer in time")
	}
	return fmt.Errorf("posting to the webhook: %w", ue.Err)
}

// Sign is the X-EWP-Signature value of body signed at timestamp ts:
// "sha256=" and the hex HMAC-SHA256, keyed with secret, of ts + "." + body.
func Sign(secret []byte, ts string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	return signaturePrefix + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a notice as a receiver would: the signature matches the
// body and timestamp under secret (compared in constant time), and the
// timestamp is within maxSkew of now.
func Verify(secret []byte, ts, signature string, body []byte, now time.Time, maxSkew time.Duration) error {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%s %q: want Unix seconds", HeaderTimestamp, ts)
	}
	if skew := now.Sub(time.Unix(sec, 0)).Abs(); skew > maxSkew {
		return fmt.Errorf("%s is %v from now (more than %v): refused as a possible replay", HeaderTimestamp, skew, maxSkew)
	}
	if !hmac.Equal([]byte(Sign(secret, ts, body)), []byte(signature)) {
		return fmt.Errorf("%s does not match the body and timestamp under this secret", HeaderSignature)
	}
	return nil
}
