package console

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
)

// withDeadline serves a page under the console's per-request deadline
// (Config.RequestTimeout). The page runs on a context that ends at the
// deadline, writing into a buffer; if it has not finished by then (a
// store that does not answer: a frozen database), the operator gets an
// error page saying so instead of a connection that hangs, and what the
// page writes afterwards is dropped.
func (c *Console) withDeadline(w http.ResponseWriter, r *http.Request, page http.HandlerFunc) {
	ctx, cancel := context.WithTimeout(r.Context(), c.cfg.RequestTimeout)
	defer cancel()
	// The form is read here, while the request is still ours: the page may
	// go on after its answer was sent.
	_ = r.ParseForm()
	r = r.WithContext(ctx)
	buf := &pageBuffer{header: http.Header{}}
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		page(buf, r)
	}()
	select {
	case p := <-done:
		if p != nil {
			c.cfg.Logger.Error("console: page failed", "path", r.URL.Path, "panic", p)
			c.errorPage(w, r, http.StatusInternalServerError, "Console error", "This page failed; the error is in the server's log.")
			return
		}
		buf.copyTo(w)
	case <-ctx.Done():
		c.cfg.Logger.Warn("console: page past its deadline", "path", r.URL.Path, "deadline", c.cfg.RequestTimeout)
		msg := fmt.Sprintf("The page did not finish within the console's %v deadline: the evidence store or the decision log "+
			"did not answer in time. Reload to try again; if it persists, check the database.", c.cfg.RequestTimeout)
		if r.Method == http.MethodPost {
			msg += " The action you sent may still complete: look at its page before repeating it."
		}
		c.errorPage(w, r, http.StatusServiceUnavailable, "Timed out", msg)
	}
}

// pageBuffer is a page's response held until it is sent whole.
type pageBuffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *pageBuffer) Header() http.Header { return b.header }

func (b *pageBuffer) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *pageBuffer) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

// copyTo sends the held response.
func (b *pageBuffer) copyTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.WriteHeader(b.status)
	w.Write(b.body.Bytes()) //nolint:errcheck // the client went away
}
