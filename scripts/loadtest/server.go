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

	"github.com/ewp-go/ewp/ledger"
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
	l, err := ledger.Create(tmp, ledger.Options{})
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

func startServer(cfg config) (*server, error) {
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
	db, err := cachedLedger(cfg.dir, cfg.props)
	if err != nil {
		return nil, err
	}
	if cfg.baseline {
		if cfg.inprocess || cfg.serve {
			return startBaseline(db)
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
	if err := readThrough(db); err != nil {
		return nil, err
	}
	if cfg.inprocess || cfg.serve {
		return startInProcess(db)
	}
	bin := cfg.server
	if bin == "" {
		bin = filepath.Join(cfg.dir, "ewp-mcp")
		build := exec.Command("go", "build", "-o", bin, "github.com/ewp-go/ewp/cmd/ewp-mcp")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("go build ewp-mcp: %w", err)
		}
	}
	return startProcess(bin, []string{"--db", db, "--http", "127.0.0.1:0"}, cfg.serverEnv)
}

var servingURL = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)

// startProcess runs a server (`ewp-mcp --db DB --http 127.0.0.1:0`, or
// this command serving the baseline) and reads the address it chose from
// its log.
func startProcess(bin string, args, env []string) (*server, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
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

// startInProcess serves the ledger from this process, as ewp-mcp does
// (with its garbage-collector target, unless GOGC is set).
func startInProcess(db string) (*server, error) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(mcp.GCPercent)
	}
	l, err := ledger.Open(db, ledger.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		l.Close()
		return nil, err
	}
	addr := ln.Addr().String()
	h, err := ewpHandler(l, addr)
	if err != nil {
		ln.Close()
		l.Close()
		return nil, err
	}
	stop := serveOn(ln, h, func() { l.Close() })
	return &server{kind: "in-process", url: "http://" + addr + mcp.EndpointPath, inproc: true, stop: stop}, nil
}

// ewpHandler is ewp-mcp's HTTP handler over l, logging nothing.
func ewpHandler(l *ledger.Ledger, addr string) (http.Handler, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	return mcp.New(ledgerstore.New(l), mcp.WithLogger(quiet)).HTTPHandler(mcp.HTTPConfig{Addr: addr})
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
