package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/warrant"
)

// buildDemoLedger writes the embedded example evidence and the demo concept
// graph into a new ledger in a fresh temporary directory and returns its
// path and a cleanup. The server then opens it like any other ledger
// (read-only unless told).
func buildDemoLedger(ctx context.Context) (string, func(), error) {
	dir, err := os.MkdirTemp("", "ewp-demo-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	path := filepath.Join(dir, "demo.sqlite")
	if err := fillDemo(ctx, path); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("building the demo ledger: %w", err)
	}
	return path, cleanup, nil
}

func fillDemo(ctx context.Context, path string) error {
	var env struct {
		Views []json.RawMessage `json:"views"`
	}
	if err := json.Unmarshal(fixtures.QuickstartViews, &env); err != nil {
		return err
	}
	views := make([]*warrant.View, len(env.Views))
	for i, raw := range env.Views {
		v, err := warrant.DecodeView(raw)
		if err != nil {
			return fmt.Errorf("example view %d: %w", i, err)
		}
		views[i] = v
	}
	l, err := sqlite.Create(path, sqlite.Options{})
	if err != nil {
		return err
	}
	defer l.Close()
	// The examples are ours: the operator attests their trusted origins.
	if _, err := l.Put(ctx, views); err != nil {
		return err
	}
	// The guard demo: the filesystem concept graph its policies sit on.
	if _, err := graphstore.LoadDocument(ctx, l, fixtures.DemoGraph); err != nil {
		return fmt.Errorf("demo concept graph: %w", err)
	}
	return nil
}

// demoKeys makes the demo's operator key pair in its directory: the
// console signs with it (unless --console-key names another) and the gate
// trusts it (beside any --operator-keys), so the demo's approval loop
// works and ewp-audit approve --key DIR/operator.key signs for it too.
// The key dies with the demo's directory.
func demoKeys(cfg *config, dir string) error {
	s, err := audit.GenerateSigner("demo-operator")
	if err != nil {
		return err
	}
	keyFile, keysFile := filepath.Join(dir, "operator.key"), filepath.Join(dir, "operator-keys")
	if err := s.WriteFile(keyFile); err != nil {
		return err
	}
	lines := s.PublicLine() + "\n"
	if cfg.operatorKeys != "" {
		more, err := os.ReadFile(cfg.operatorKeys)
		if err != nil {
			return fmt.Errorf("--operator-keys: %w", err)
		}
		lines += string(more)
	}
	if err := os.WriteFile(keysFile, []byte(lines), 0o600); err != nil {
		return err
	}
	cfg.operatorKeys = keysFile
	if cfg.consoleKey == "" {
		cfg.consoleKey = keyFile
	}
	return nil
}
