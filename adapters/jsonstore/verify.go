package jsonstore

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// VerifyReport counts what Verify checked.
type VerifyReport struct {
	Propositions int
	Snapshots    int
}

// Verify re-derives every index from the snapshot files and compares: each
// body must hash to its indexed sum, decode with the kernel and re-encode
// to the same bytes under its indexed view id; the history must obey the
// §9 record rules in the order stored; the record index and latest texts
// must be what the bodies imply; and a proposition directory must hold no
// file its index does not name. It stops at the first problem, returned as
// an *Error. It runs under the shared lock, beside other readers.
func (s *Store) Verify(ctx context.Context) (VerifyReport, error) {
	var rep VerifyReport
	err := s.read(ctx, func() error {
		entries, err := os.ReadDir(s.dir)
		if err != nil {
			return storeErr("verify", err)
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			n, err := s.verifyProp(e.Name())
			if err != nil {
				return storeErr("verify", err)
			}
			if n > 0 {
				rep.Propositions++
				rep.Snapshots += n
			}
		}
		return nil
	})
	return rep, err
}

// verifyProp checks one proposition directory and returns its number of
// snapshots.
func (s *Store) verifyProp(name string) (int, error) {
	st, ok, err := loadDir(s.dir, name)
	if err != nil || !ok {
		return 0, err
	}
	rebuilt := snapshot.Map{}
	var texts []string
	for i, e := range st.snaps {
		raw, v, err := s.readBody(st, e)
		if err != nil {
			return 0, err
		}
		if err := sameSnapshot(st, i, e, raw, v); err != nil {
			return 0, err
		}
		fps, err := snapshot.Check(rebuilt, v)
		if err != nil {
			return 0, fmt.Errorf("%s/%s breaks the history rules: %w", name, e.File, err)
		}
		rebuilt.Add(v.ViewID, fps)
		texts = assertionTexts(v)
	}
	if !maps.Equal(rebuilt, st.records) {
		return 0, fmt.Errorf("%s/%s: the record index differs from what the snapshots hold", name, indexName)
	}
	if !slices.Equal(texts, st.texts) {
		return 0, fmt.Errorf("%s/%s: latest_texts differ from the latest snapshot's assertions", name, indexName)
	}
	return len(st.snaps), s.noStrayFiles(st)
}

func sameSnapshot(st *propState, i int, e snapEntry, raw []byte, v *warrant.View) error {
	where := st.name + "/" + e.File
	switch {
	case e.Seq != int64(i)+1:
		return fmt.Errorf("%s: sequence %d at position %d", where, e.Seq, i)
	case e.File != snapFile(e.Seq, string(e.ViewID)):
		return fmt.Errorf("%s: file name does not match view id %q", where, e.ViewID)
	case v.PropositionID != st.id || v.ViewID != string(e.ViewID):
		return fmt.Errorf("%s holds (%q, %q), the index says (%q, %q)", where, v.PropositionID, v.ViewID, st.id, e.ViewID)
	}
	if !bytes.Equal(warrant.Encode(v), raw) {
		return fmt.Errorf("%s does not re-encode to its own bytes", where)
	}
	return nil
}

// noStrayFiles refuses files in a proposition directory that its index
// does not name: a batch's files arrive together with the index that
// names them, so a stray file was put there by something else.
func (s *Store) noStrayFiles(st *propState) error {
	entries, err := os.ReadDir(filepath.Join(s.dir, st.name))
	if err != nil {
		return err
	}
	named := map[string]bool{indexName: true}
	for _, e := range st.snaps {
		named[e.File] = true
	}
	for _, e := range entries {
		if !named[e.Name()] {
			return fmt.Errorf("%s/%s is not named by the index", st.name, e.Name())
		}
	}
	return nil
}
