package conformance

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// maxAnswerBytes bounds one answer line of an eval target; a longer line
// is reported as a crash rather than read without end.
const maxAnswerBytes = 64 << 20

// evalTarget drives a program that speaks the eval JSON Lines protocol
// (conformance/PROTOCOL.md): one document per line in, one answer per
// line out, in order. It sends one document at a time and waits for its
// answer under the case's deadline, so a hang is one TIMEOUT and a crash
// one CRASH; either way the program is started afresh for the next case.
type evalTarget struct {
	argv []string
	proc *evalProcess
}

// NewEvalTarget returns the target that runs argv (no shell) and speaks
// the eval protocol with it. The program starts on the first case.
func NewEvalTarget(argv []string, _ TargetOptions) Target {
	return &evalTarget{argv: argv}
}

func (t *evalTarget) Describe() string { return "eval:" + strings.Join(t.argv, " ") }

func (t *evalTarget) Close() error {
	if t.proc != nil {
		t.proc.stop()
		t.proc = nil
	}
	return nil
}

func (t *evalTarget) Evaluate(ctx context.Context, doc []byte) (Answer, error) {
	if t.proc == nil {
		p, err := startEval(t.argv)
		if err != nil {
			return Answer{}, crash("cannot start %q: %v", t.argv[0], err)
		}
		t.proc = p
	}
	a, err := t.proc.ask(ctx, doc)
	if err != nil {
		// Whatever went wrong, the stream is no longer in step: the next
		// case gets a fresh process.
		t.proc.stop()
		t.proc = nil
	}
	return a, err
}

// evalProcess is one running eval program.
type evalProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // closed when its standard output ends
	readEr error       // why the output ended, read after lines is closed
	stderr *tailBuffer
	exited chan struct{}
}

func startEval(argv []string) (*evalProcess, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &evalProcess{cmd: cmd, stdin: stdin, lines: make(chan []byte, 16),
		stderr: &tailBuffer{max: 2048}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go p.read(stdout)
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *evalProcess) read(stdout io.Reader) {
	defer close(p.lines)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 1<<16), maxAnswerBytes)
	for sc.Scan() {
		p.lines <- bytes.Clone(sc.Bytes())
	}
	p.readEr = sc.Err()
}

// ask sends one document and reads its answer.
func (p *evalProcess) ask(ctx context.Context, doc []byte) (Answer, error) {
	select {
	case line, ok := <-p.lines:
		if ok {
			return Answer{}, crash("wrote a line before this document was sent (an extra or out-of-order answer to an earlier one): %s", quoteLine(line))
		}
		return Answer{}, p.ended("before this document was sent")
	default:
	}
	sent := make(chan error, 1)
	go func() {
		_, err := p.stdin.Write(append(oneLine(doc), '\n'))
		sent <- err
	}()
	select {
	case line, ok := <-p.lines:
		if !ok {
			return Answer{}, p.ended("without answering this document")
		}
		return parseAnswer(line)
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Answer{}, timedOut("no answer line within the per-case timeout (--timeout); the program was stopped and restarted")
		}
		return Answer{}, crash("run cancelled: %v", ctx.Err())
	}
}

// oneLine puts a document on one line: a newline can only be whitespace
// between JSON tokens (never inside a string), so a space is the same
// document.
func oneLine(doc []byte) []byte {
	doc = bytes.ReplaceAll(doc, []byte("\r"), []byte(" "))
	return bytes.ReplaceAll(doc, []byte("\n"), []byte(" "))
}

// ended describes a program whose output stopped: its exit status, if it
// has one yet, and the end of what it wrote to standard error.
func (p *evalProcess) ended(when string) error {
	if p.readEr != nil {
		return crash("output unreadable %s: %v", when, p.readEr)
	}
	status := "closed its output"
	select {
	case <-p.exited:
		status = "exited (" + p.cmd.ProcessState.String() + ")"
	case <-time.After(time.Second):
	}
	return crash("%s %s; standard error ends: %s", status, when, quoteLine(p.stderr.Bytes()))
}

// stop ends the program: its input is closed, which a conforming program
// answers by exiting; one that does not is killed.
func (p *evalProcess) stop() {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(500 * time.Millisecond):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf)
}
