// Package conformance judges an EWP implementation — this kernel, a
// program speaking the eval JSON Lines protocol (PROTOCOL.md), or an MCP
// server — against a pack laid out like the reference's implementer pack
// (fixtures/, expected/, invalid/, goldens/) and a differential corpus,
// naming each case's failure by class with field diffs (Runner), and it
// serves the eval protocol itself (Eval).
package conformance

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/ewp-go/ewp/warrant"
)

// Refusal is the eval answer for a document the kernel will not evaluate.
type Refusal struct {
	Refused bool   `json:"refused"`
	Code    string `json:"code"`
	Error   string `json:"error"`
}

// EvalDocument evaluates one fixture-format document: the view, its
// evaluated_at and an optional policy identity. Every failure is a
// refusal; nothing here can panic on hostile input.
func EvalDocument(doc []byte) (*warrant.WarrantView, *Refusal) {
	var dec warrant.Decoder
	return evalWith(&dec, doc)
}

func evalWith(dec *warrant.Decoder, doc []byte) (*warrant.WarrantView, *Refusal) {
	d, err := dec.DecodeDocument(doc)
	if err == nil && d.EvaluatedAt == "" {
		err = missingEvaluatedAt()
	}
	if err == nil {
		var w *warrant.WarrantView
		if w, err = warrant.Evaluate(d.View, d.EvaluatedAt); err == nil {
			return w, nil
		}
	}
	return nil, refusal(err)
}

// missingEvaluatedAt refuses a document with no instant to evaluate at:
// evaluated_at absent, null or "", as warrant_now refuses it.
func missingEvaluatedAt() error {
	return &warrant.Error{Code: warrant.CodeMissingEvaluatedAt, Field: "evaluated_at",
		Rule: `is required: warrant is computed at an instant, e.g. "2026-09-21T18:00:00Z"; there is no default`}
}

func refusal(err error) *Refusal {
	var e *warrant.Error
	if errors.As(err, &e) {
		return &Refusal{Refused: true, Code: e.Code, Error: e.Message()}
	}
	return &Refusal{Refused: true, Code: warrant.CodeInvalidView, Error: err.Error()}
}

// maxLine is the longest line Eval reads whole: a document at the
// kernel's size limit, and its line end. A longer line is refused without
// being kept, so memory stays at one buffer whatever the input.
var maxLine = warrant.DefaultLimits.MaxViewBytes + len("\r\n")

// Eval reads JSON Lines of fixture-format documents from r and writes
// exactly one JSON line per input line to w, in order: the WarrantView or
// a refusal. This is the stable differential-testing interface. A line
// longer than a document may be is answered with a refusal
// (EWP_REFUSE_LIMIT_EXCEEDED) and read no further than its end.
func Eval(r io.Reader, w io.Writer) error {
	in := bufio.NewReaderSize(r, maxLine)
	out := bufio.NewWriterSize(w, 1<<16)
	var dec warrant.Decoder
	for {
		line, err := in.ReadSlice('\n')
		var werr error
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			err = skipLine(in)
			werr = writeJSON(out, tooLong())
		case len(line) > 0:
			werr = writeAnswer(out, &dec, trimEOL(line))
		}
		if werr != nil {
			return werr
		}
		// A caller that sends one document and waits for its answer
		// (PROTOCOL.md) gets it at once; a stream of documents is still
		// answered in large writes.
		if in.Buffered() == 0 {
			if ferr := out.Flush(); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return out.Flush()
		}
		if err != nil {
			return err
		}
	}
}

// skipLine discards the rest of an over-long line, up to and including
// its newline; it returns io.EOF when the input ends first.
func skipLine(in *bufio.Reader) error {
	for {
		_, err := in.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

func tooLong() *Refusal {
	return &Refusal{Refused: true, Code: warrant.CodeLimitExceeded,
		Error: "the line is over " + strconv.Itoa(maxLine) + " bytes: a document is at most " +
			strconv.Itoa(warrant.DefaultLimits.MaxViewBytes) + " bytes of JSON text (MaxViewBytes)"}
}

func trimEOL(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	return line
}

func writeAnswer(out *bufio.Writer, dec *warrant.Decoder, line []byte) error {
	wv, ref := evalWith(dec, line)
	if ref != nil {
		return writeJSON(out, ref)
	}
	return writeJSON(out, wv)
}

func writeJSON(out *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = out.Write(b)
	return err
}
