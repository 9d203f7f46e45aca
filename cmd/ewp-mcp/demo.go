package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/internal/opfile"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/warrant"
)

// The files a demo keeps in its directory.
const (
	demoLedgerName = "demo.sqlite"
	demoKeyName    = "operator.key"
	demoKeysName   = "operator-keys"
)

// demoRun is a demo's directory and what the server made there. Its
// decision log is the real SQLite store beside the ledger (the default
// --audit path, DIR/demo.sqlite.audit), so ewp-audit answers what the
// demo's agent asked.
type demoRun struct {
	dir     string
	ledger  string // dir/demo.sqlite
	key     string // dir/operator.key: the demo operator's private key
	fresh   bool   // built now (not reused from --demo-dir)
	kept    bool   // --demo-dir: outlives the server
	audit   string // the decision log in force (auditPath), "" when off
	cleanup func()
}

// openDemo makes the demo's directory: --demo-dir DIR when given (kept
// on exit, and reused as it is when it already holds a demo, so a stdio
// client that restarts the server finds its log again), else a fresh
// temporary directory deleted on exit. A new demo gets the example
// ledger (with a history) and an operator key pair.
func openDemo(ctx context.Context, cfg *config) (*demoRun, error) {
	d := &demoRun{cleanup: func() {}}
	if cfg.demoDir == "" {
		dir, err := os.MkdirTemp("", "ewp-demo-")
		if err != nil {
			return nil, err
		}
		d.dir, d.cleanup = dir, func() { os.RemoveAll(dir) }
	} else {
		dir, err := filepath.Abs(cfg.demoDir)
		if err == nil {
			err = os.MkdirAll(dir, 0o700)
		}
		if err != nil {
			return nil, fmt.Errorf("--demo-dir: %w", err)
		}
		d.dir, d.kept = dir, true
	}
	d.ledger, d.key = filepath.Join(d.dir, demoLedgerName), filepath.Join(d.dir, demoKeyName)
	if err := d.build(ctx, cfg); err != nil {
		d.cleanup()
		return nil, err
	}
	cfg.db = d.ledger
	return d, nil
}

func (d *demoRun) build(ctx context.Context, cfg *config) error {
	_, err := os.Stat(d.ledger)
	switch {
	case err == nil:
		if _, err := os.Stat(d.key); err != nil {
			return fmt.Errorf("--demo-dir %s holds a demo ledger but no %s: name a new directory", d.dir, demoKeyName)
		}
	case errors.Is(err, os.ErrNotExist):
		if err := fillDemo(ctx, d.ledger); err != nil {
			return fmt.Errorf("building the demo ledger: %w", err)
		}
		d.fresh = true
	default:
		return fmt.Errorf("--demo-dir: %w", err)
	}
	if err := demoKeys(cfg, d.dir, d.fresh); err != nil {
		return fmt.Errorf("the demo's operator key: %w", err)
	}
	return nil
}

// The story's clock, fixed like the examples' own dates (so a warrant
// asked at a fixed evaluated_at, as the README's and the client checks'
// are, does not depend on the day the demo runs): the examples are
// stored on demoStored, and a restore drill on demoDrill makes
// P-backup-restores CURRENT for its 30-day freshness policy, STALE again
// from demoDrill + 30 days on.
var (
	demoStored = time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	demoDrill  = time.Date(2026, 9, 15, 10, 0, 0, 0, time.UTC)
)

// fillDemo writes the embedded example evidence, the demo concept graph
// and a history into a new ledger at path, through the ledger's own
// writes (Put, as ewp-ingest stores; AppendCheck, as check_record does),
// each at its story time.
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
	clock := demoStored
	l, err := sqlite.Create(path, sqlite.Options{Now: func() time.Time { return clock }})
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
	clock = demoDrill.Add(time.Hour) // stored an hour after the drill
	if _, err := l.AppendCheck(ctx, "P-backup-restores", restoreDrill(demoDrill)); err != nil {
		return fmt.Errorf("demo history: %w", err)
	}
	return nil
}

// restoreDrill is a human-attested restore drill made at at: it makes
// P-backup-restores CURRENT again until its freshness policy runs out, so
// its warrant changes twice over the demo's history.
func restoreDrill(at time.Time) warrant.Check {
	when := at.Format(time.RFC3339)
	return warrant.Check{CheckID: "k-drill-2", Method: "human_attestation", Scope: "restore drill OPS-5120",
		Subjects: []string{"backup-nightly"}, Result: warrant.Supports, ObservedAt: when,
		Source: warrant.SourceRef{SourceID: "restore-drill-2", LineageID: "L-drill-2", OriginType: "human",
			OriginLocator: "restore drill ticket OPS-5120", SnapshotID: "restore-drill-2@1",
			ContentHash: "sha256:d1ce", ObservedAt: when}}
}

// demoKeys gives the demo its operator key pair in dir (made when fresh,
// else the one already there): the console signs with it (unless
// --console-key names another) and the gate trusts it (beside any
// --operator-keys), so the demo's approval loop works and ewp-audit
// approve --key DIR/operator.key signs for it too.
func demoKeys(cfg *config, dir string, fresh bool) error {
	keyFile, keysFile := filepath.Join(dir, demoKeyName), filepath.Join(dir, demoKeysName)
	var s *audit.Signer
	var err error
	if fresh {
		if s, err = audit.GenerateSigner("demo-operator"); err == nil {
			err = s.WriteFile(keyFile)
		}
	} else {
		s, err = audit.LoadSigner(keyFile)
	}
	if err != nil {
		return err
	}
	lines := s.PublicLine() + "\n"
	if cfg.operatorKeys != "" {
		more, _, err := opfile.Read(cfg.operatorKeys, opfile.MaxSecretBytes)
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

// note prints the line that names the demo's directory, first of all.
func (d *demoRun) note(w io.Writer) {
	if d.fresh {
		fmt.Fprintf(w, "ewp-mcp demo: built in %s (ledger, decision log, operator key)\n", d.dir)
	} else {
		fmt.Fprintf(w, "ewp-mcp demo: reusing %s\n", d.dir)
	}
}
