package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	auditsqlite "github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/mcp/ledgerstore"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// cachedLedger returns the path of a ledger of props synthetic
// propositions (one snapshot each), building it on first use. It is built
// under a temporary name and renamed, so an interrupted build is never
// mistaken for a cached one.
func cachedLedger(dir string, props int) (string, error) {
	path := filepath.Join(dir, fmt.Sprintf("ledger-%d.sqlite", props))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp := path + ".building"
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(tmp + suffix)
	}
	fmt.Fprintf(os.Stderr, "building %s (once)...\n", path)
	start := time.Now()
	l, err := sqlite.Create(tmp, sqlite.Options{})
	if err != nil {
		return "", err
	}
	res, err := l.PutEach(context.Background(), props, func(i int) (*warrant.View, error) {
		return warrant.DecodeView(snapshottest.SyntheticView(i, 0))
	})
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("building the ledger: %w", err)
	}
	if res.Stored != props {
		return "", fmt.Errorf("building the ledger: stored %d of %d views", res.Stored, props)
	}
	// The WAL is normally checkpointed away on close; if not, it moves too.
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Rename(tmp+suffix, path+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "built in %v\n", time.Since(start).Round(time.Millisecond))
	return path, nil
}

// readThrough reads the ledger once, so that the measurements start with
// it in the page cache, as it is in a server that has been serving, and
// not with pages the machine paged out while the ledger sat idle (see
// usage.go).
func readThrough(db string) error {
	for _, path := range []string{db, db + "-wal"} {
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
	}
	return nil
}

type server struct {
	kind   string
	url    string
	inproc bool  // served from this process
	pids   []int // the server's processes (replicas), none when unknown or in-process
	stop   func()
}

// A launcher starts servers of one ledger, with or without a decision
// log: one for the whole run, or with -compare-audit one per measurement.
type launcher struct {
	cfg   config
	db    string    // the ledger; "" with -url
	bin   string    // the ewp-mcp binary; "" when none is run
	stamp fileStamp // the ledger as found, to show it was left unchanged
}

// newLauncher builds (or finds) the ledger and the ewp-mcp binary.
func newLauncher(cfg config) (*launcher, error) {
	ln := &launcher{cfg: cfg}
	if cfg.url != "" {
		return ln, nil
	}
	db, err := cachedLedger(cfg.dir, cfg.props)
	if err != nil {
		return nil, err
	}
	ln.db = db
	if ln.stamp, err = stampOf(db); err != nil {
		return nil, err
	}
	if cfg.baseline || cfg.inprocess || cfg.serve {
		return ln, nil
	}
	ln.bin = cfg.server
	if ln.bin == "" {
		ln.bin = filepath.Join(cfg.dir, "ewp-mcp")
		build := exec.Command("go", "build", "-o", ln.bin, "github.com/ewp-go/ewp/cmd/ewp-mcp")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("go build ewp-mcp: %w", err)
		}
	}
	return ln, nil
}

// start starts a server; logged asks for a decision log, which starts
// empty: the log of an earlier load (or run) is deleted first, so every
// load pays for a log of its own decisions only. Without logged, ewp-mcp
// runs with --audit off.
func (ln *launcher) start(logged bool) (*server, error) {
	cfg := ln.cfg
	if cfg.url != "" {
		var pids []int
		for _, f := range strings.FieldsFunc(cfg.pid, func(r rune) bool { return r == ',' }) {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return nil, fmt.Errorf("-pid %q: want process ids, comma-separated", cfg.pid)
			}
			pids = append(pids, n)
		}
		return &server{kind: "external", url: cfg.url, pids: pids, stop: func() {}}, nil
	}
	if cfg.baseline {
		if cfg.inprocess || cfg.serve {
			return startBaseline(ln.db)
		}
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		srv, err := startProcess(self, []string{"-serve", "-baseline", "-props", strconv.Itoa(cfg.props), "-dir", cfg.dir}, cfg.serverEnv)
		if err == nil {
			srv.kind = "baseline (bare net/http) process"
		}
		return srv, err
	}
	// Only a server of the ledger reads it while measured; the baseline
	// (above, parent and child) reads one view at its start.
	if err := readThrough(ln.db); err != nil {
		return nil, err
	}
	var logPath string
	if logged {
		// Where ewp-mcp keeps its log when --audit is not given.
		logPath = auditsqlite.DefaultPath(ln.db)
		if err := removeLog(logPath); err != nil {
			return nil, err
		}
	}
	if cfg.inprocess || cfg.serve {
		return startInProcess(ln.db, logPath)
	}
	args := []string{"--db", ln.db, "--http", "127.0.0.1:0"}
	if !logged {
		args = append(args, "--audit", "off")
	}
	return startProcess(ln.bin, args, cfg.serverEnv)
}

// startBinary starts the ewp-mcp binary bin over the ledger, with a
// decision log (started empty) when logged, at the default path plus
// suffix: two builds compared side by side each keep a log of their own.
func (ln *launcher) startBinary(bin string, logged bool, suffix string) (*server, error) {
	logPath := auditsqlite.DefaultPath(ln.db) + suffix
	if err := readThrough(ln.db); err != nil {
		return nil, err
	}
	args := []string{"--db", ln.db, "--http", "127.0.0.1:0", "--audit", "off"}
	if logged {
		if err := removeLog(logPath); err != nil {
			return nil, err
		}
		args[len(args)-1] = logPath
	}
	return startProcess(bin, args, ln.cfg.serverEnv)
}

// removeLog deletes a decision log and its WAL and shared-memory files.
func removeLog(path string) error {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing the previous decision log: %w", err)
		}
	}
	return nil
}

// A fileStamp is what changes when a file is written.
type fileStamp struct {
	size    int64
	modTime time.Time
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{fi.Size(), fi.ModTime()}, nil
}

// ledgerUnchanged makes sure the servers left the ledger as they found
// it: ewp-mcp opens it read-only (it has no ingest token here, see
// serverEnviron), as does the in-process server, and a ledger that
// changed would no longer be the synthetic one the answers are checked
// against.
func (ln *launcher) ledgerUnchanged() error {
	if ln.db == "" {
		return nil
	}
	now, err := stampOf(ln.db)
	if err != nil {
		return err
	}
	if now != ln.stamp {
		return fmt.Errorf("the ledger %s was written during the run (size %d to %d, modified %v): "+
			"the servers must open it read-only; delete it to have it rebuilt", ln.db, ln.stamp.size, now.size, now.modTime)
	}
	return nil
}

var servingURL = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)

// startProcess runs a server (`ewp-mcp --db DB --http 127.0.0.1:0`, or
// this command serving the baseline) and reads the address it chose from
// its log.
func startProcess(bin string, args, env []string) (*server, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(serverEnviron(os.Environ()), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingURL.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			} else if strings.Contains(sc.Text(), "level=ERROR") {
				fmt.Fprintln(os.Stderr, "server:", sc.Text())
			}
		}
	}()
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	select {
	case url := <-found:
		kind := "process " + bin
		if len(env) > 0 {
			kind += " with " + strings.Join(env, " ")
		}
		return &server{kind: kind, url: url, pids: []int{cmd.Process.Pid}, stop: stop}, nil
	case <-time.After(30 * time.Second):
		stop()
		return nil, fmt.Errorf("%s did not start serving within 30 s", filepath.Base(bin))
	}
}

// serverEnviron is this process's environment without the ingest token:
// with one, ewp-mcp --http would open the ledger for writing (cmd/ewp-mcp
// store.go). -server-env can still set it on purpose.
func serverEnviron(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "EWP_INGEST_TOKEN=") {
			out = append(out, kv)
		}
	}
	return out
}

// startInProcess serves the ledger from this process, as ewp-mcp does
// (with its garbage-collector target, unless GOGC is set), recording
// decisions in a new SQLite decision log at logPath unless it is "".
func startInProcess(db, logPath string) (*server, error) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(mcp.GCPercent)
	}
	l, err := sqlite.Open(db, sqlite.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		l.Close()
		return nil, err
	}
	var opts []mcp.Option
	closeLog := func() {}
	if logPath != "" {
		dl, err := auditsqlite.Create(logPath, auditsqlite.Options{})
		if err != nil {
			ln.Close()
			l.Close()
			return nil, fmt.Errorf("creating the decision log: %w", err)
		}
		opts = append(opts, mcp.WithDecisionLog(mcp.DecisionLog{Log: dl}))
		closeLog = func() { _ = dl.Close() }
	}
	addr := ln.Addr().String()
	h, err := ewpHandler(l, addr, opts...)
	if err != nil {
		ln.Close()
		closeLog()
		l.Close()
		return nil, err
	}
	stop := serveOn(ln, h, func() { closeLog(); l.Close() })
	return &server{kind: "in-process", url: "http://" + addr + mcp.EndpointPath, inproc: true, stop: stop}, nil
}

// ewpHandler is ewp-mcp's HTTP handler over l, logging nothing.
func ewpHandler(l *sqlite.Ledger, addr string, opts ...mcp.Option) (http.Handler, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts = append([]mcp.Option{mcp.WithLogger(quiet)}, opts...)
	return mcp.New(ledgerstore.New(l), opts...).HTTPHandler(mcp.HTTPConfig{Addr: addr})
}

// serveOn serves h on ln with ewp-mcp's server settings; the function it
// returns shuts the server down (closing it if that takes over 10 s), then
// runs after.
func serveOn(ln net.Listener, h http.Handler, after func()) (stop func()) {
	hs := mcp.NewHTTPServer(ln.Addr().String(), h)
	go func() { _ = hs.Serve(ln) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if hs.Shutdown(ctx) != nil {
			_ = hs.Close()
		}
		after()
	}
}
