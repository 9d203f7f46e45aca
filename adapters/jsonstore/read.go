package jsonstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ewp-go/ewp/warrant"
)

// MaxListLimit bounds one List call, as the ledger's does.
const MaxListLimit = 500

// Snapshot describes one stored snapshot.
type Snapshot struct {
	Seq           int64
	PropositionID string
	ViewID        string
	// File is the body's path relative to the store directory.
	File string
}

// PropositionSummary is one discovery hit: never a warrant, only what is
// stored.
type PropositionSummary struct {
	PropositionID string
	LatestViewID  string
	// Texts are the assertion texts of the latest snapshot.
	Texts []string
}

// Latest returns the most recently stored snapshot of a proposition, or a
// *warrant.Error with CodeMissingView.
func (s *Store) Latest(ctx context.Context, propositionID string) (*warrant.View, error) {
	var v *warrant.View
	err := s.read(ctx, func() error {
		st, err := loadProp(s.dir, propositionID)
		if err != nil {
			return err
		}
		v, err = s.latestOf(st)
		if err == nil && v == nil {
			err = missingProposition(propositionID)
		}
		return err
	})
	return v, err
}

// Get returns one stored snapshot by view id, or CodeMissingView.
func (s *Store) Get(ctx context.Context, propositionID, viewID string) (*warrant.View, error) {
	var v *warrant.View
	err := s.read(ctx, func() error {
		st, err := loadProp(s.dir, propositionID)
		if err != nil {
			return err
		}
		i, ok := st.views[viewID]
		if !ok {
			return &warrant.Error{Code: warrant.CodeMissingView, Field: "view_id",
				Rule: fmt.Sprintf("proposition %q has no snapshot with view_id %q; omit view_id for the latest, or list the proposition's snapshots", propositionID, viewID)}
		}
		v, err = s.body(st, st.snaps[i])
		return err
	})
	return v, err
}

// History lists the snapshots of a proposition, oldest first; an unknown
// proposition has none.
func (s *Store) History(ctx context.Context, propositionID string) ([]Snapshot, error) {
	var out []Snapshot
	err := s.read(ctx, func() error {
		st, err := loadProp(s.dir, propositionID)
		if err != nil {
			return err
		}
		for _, e := range st.snaps {
			out = append(out, Snapshot{Seq: e.Seq, PropositionID: propositionID, ViewID: string(e.ViewID), File: filepath.Join(st.name, e.File)})
		}
		return nil
	})
	return out, err
}

// List finds propositions whose id, or any assertion text of whose latest
// snapshot, contains query case-insensitively ("" matches all), ordered by
// proposition id, at most limit of them (clamped to 1..MaxListLimit). It
// reads every proposition's index: this store has no text index, which is
// fine for the sizes a directory of files suits.
func (s *Store) List(ctx context.Context, query string, limit int) ([]PropositionSummary, error) {
	limit = max(1, min(limit, MaxListLimit))
	fold := strings.ToLower(query)
	out := []PropositionSummary{}
	err := s.read(ctx, func() error {
		all, err := s.summaries(ctx)
		if err != nil {
			return err
		}
		for _, p := range all {
			if p.matches(fold) {
				out = append(out, p)
			}
		}
		return nil
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, err
}

func (p PropositionSummary) matches(fold string) bool {
	if strings.Contains(strings.ToLower(p.PropositionID), fold) {
		return true
	}
	for _, t := range p.Texts {
		if strings.Contains(strings.ToLower(t), fold) {
			return true
		}
	}
	return false
}

// summaries reads every proposition's index, sorted by proposition id.
func (s *Store) summaries(ctx context.Context) ([]PropositionSummary, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, storeErr("list", err)
	}
	var out []PropositionSummary
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st, ok, err := loadDir(s.dir, e.Name())
		if err != nil {
			return nil, err
		}
		if last, has := st.latest(); ok && has {
			out = append(out, PropositionSummary{PropositionID: st.id, LatestViewID: string(last.ViewID), Texts: st.texts})
		}
	}
	slices.SortFunc(out, func(a, b PropositionSummary) int { return strings.Compare(a.PropositionID, b.PropositionID) })
	return out, nil
}

// loadDir reads the index in a proposition directory found by listing;
// ok is false for a directory without one (created by a batch that was
// rolled back).
func loadDir(dir, name string) (*propState, bool, error) {
	raw, err := os.ReadFile(filepath.Join(dir, name, indexName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, storeErr("read index", err)
	}
	st, err := parseIndex(name, raw)
	return st, err == nil, err
}

// latestOf reads the newest snapshot of a proposition; nil for a new one.
func (s *Store) latestOf(st *propState) (*warrant.View, error) {
	last, ok := st.latest()
	if !ok {
		return nil, nil
	}
	return s.body(st, last)
}

// body reads and decodes one snapshot file.
func (s *Store) body(st *propState, e snapEntry) (*warrant.View, error) {
	_, v, err := s.readBody(st, e)
	return v, err
}

// readBody returns a snapshot file's bytes and view. A body the kernel
// refuses, or one whose hash is not the indexed one, means the file was
// edited: a storage error, not a refusal of the caller's input.
func (s *Store) readBody(st *propState, e snapEntry) ([]byte, *warrant.View, error) {
	raw, err := os.ReadFile(filepath.Join(s.dir, st.name, e.File))
	if err != nil {
		return nil, nil, storeErr("read snapshot", err)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != e.Sum {
		return nil, nil, storeErr("read snapshot", fmt.Errorf("%s/%s does not match the sha256 in its index: the file was edited", st.name, e.File))
	}
	v, err := warrant.DecodeView(raw)
	if err != nil {
		return nil, nil, storeErr("decode stored snapshot", fmt.Errorf("%s/%s: %w", st.name, e.File, err))
	}
	return raw, v, nil
}

func missingProposition(prop string) error {
	return &warrant.Error{Code: warrant.CodeMissingView, Field: "proposition_id",
		Rule: fmt.Sprintf("proposition %q has no stored snapshot; store a view for it first, or find ids with List", prop)}
}
