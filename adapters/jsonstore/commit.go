package jsonstore

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// journal is the commit record of a batch: every staged file and the name
// it takes. Its presence on disk is the commit point: with it, a batch is
// finished (forwards); without it, whatever is staged is thrown away.
type journal struct {
	Batch string `json:"batch"`
	Moves []move `json:"moves"`
}

// move renames From to To; both are relative to the store directory.
type move struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// pendingFile is a snapshot body a batch will write.
type pendingFile struct {
	prop *propState
	name string
	data []byte
}

// commit makes the batch durable, all of it or none of it:
//
//  1. stage: write every body and every changed index.json into
//     .staging/<batch>/ and fsync them and the directory;
//  2. commit: atomically write .journal listing the renames;
//  3. apply: rename each staged file to its place (bodies first, indexes
//     last) and fsync the directories that changed;
//  4. finish: remove .journal, then the empty staging directory.
//
// A crash before 2 leaves only staged files, which recover deletes; a crash
// after 2 leaves the journal, which recover replays (a rename whose source
// is gone has already happened). Either way the batch is wholly present or
// wholly absent once the store is next locked.
func (b *batch) commit() error {
	if len(b.bodies) == 0 {
		return nil
	}
	id, err := batchID()
	if err != nil {
		return storeErr("commit", err)
	}
	j, err := b.stage(id)
	if err != nil {
		os.RemoveAll(filepath.Join(b.s.dir, stagingName, id))
		return storeErr("stage batch", err)
	}
	if err := b.s.step("staged"); err != nil {
		return err
	}
	data, _ := json.Marshal(j)
	if err := replaceFile(b.s.dir, journalName, data); err != nil {
		os.RemoveAll(filepath.Join(b.s.dir, stagingName, id))
		return storeErr("write journal", err)
	}
	if err := b.s.step("journal"); err != nil {
		return err
	}
	return b.s.finish(j)
}

// stage writes the batch's files under .staging/<id>/ and returns the
// journal that places them.
func (b *batch) stage(id string) (*journal, error) {
	rel := filepath.Join(stagingName, id)
	dir := filepath.Join(b.s.dir, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	j := &journal{Batch: id}
	add := func(data []byte, to string) error {
		name := strconv.Itoa(len(j.Moves))
		j.Moves = append(j.Moves, move{From: filepath.Join(rel, name), To: to})
		return writeNew(filepath.Join(dir, name), data)
	}
	for _, f := range b.bodies {
		if err := add(f.data, filepath.Join(f.prop.name, f.name)); err != nil {
			return nil, err
		}
	}
	for _, st := range b.order {
		if st.dirty {
			if err := add(st.encode(), filepath.Join(st.name, indexName)); err != nil {
				return nil, err
			}
		}
	}
	if err := syncDir(dir); err != nil {
		return nil, err
	}
	return j, syncDir(filepath.Dir(dir))
}

// finish applies a committed journal and removes it.
func (s *Store) finish(j *journal) error {
	if err := s.apply(j); err != nil {
		return storeErr("apply batch", err)
	}
	if err := os.Remove(filepath.Join(s.dir, journalName)); err != nil {
		return storeErr("remove journal", err)
	}
	if err := syncDir(s.dir); err != nil {
		return storeErr("remove journal", err)
	}
	if err := s.step("finished"); err != nil {
		return err
	}
	return storeErr("clean staging", os.RemoveAll(filepath.Join(s.dir, stagingName, j.Batch)))
}

// apply performs a journal's renames. It is idempotent, so recover can
// replay a journal that a crash interrupted at any point.
func (s *Store) apply(j *journal) error {
	dirs := map[string]bool{}
	newDir := false
	for i, m := range j.Moves {
		from, to := filepath.Join(s.dir, m.From), filepath.Join(s.dir, m.To)
		parent := filepath.Dir(to)
		if !dirs[parent] {
			dirs[parent] = true
			created, err := mkdirIfMissing(parent)
			if err != nil {
				return err
			}
			newDir = newDir || created
		}
		if err := renameOnce(from, to); err != nil {
			return err
		}
		if err := s.step("move " + strconv.Itoa(i)); err != nil {
			return err
		}
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	if newDir {
		return syncDir(s.dir)
	}
	return nil
}

// renameOnce renames from to to; a missing source means an earlier run of
// the same journal already did it, provided the target is there.
func renameOnce(from, to string) error {
	err := os.Rename(from, to)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if _, serr := os.Stat(to); serr == nil {
		return nil
	}
	return fmt.Errorf("journal names %s, which is neither staged nor in place: %w", to, err)
}

func mkdirIfMissing(dir string) (bool, error) {
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	return err == nil, err
}

// recover runs under the exclusive lock before every write: it finishes a
// committed batch that a crashed writer left (the journal exists) and
// deletes anything staged by a batch that never committed.
func (s *Store) recover() error {
	raw, err := os.ReadFile(filepath.Join(s.dir, journalName))
	switch {
	case err == nil:
		var j journal
		if err := json.Unmarshal(raw, &j); err != nil {
			return storeErr("recover", fmt.Errorf("%s is damaged: %w", journalName, err))
		}
		if err := s.finish(&j); err != nil {
			return err
		}
	case !errors.Is(err, os.ErrNotExist):
		return storeErr("recover", err)
	}
	return s.dropStaged()
}

// dropStaged deletes uncommitted staging directories. Called with no
// journal on disk, so nothing staged can belong to a committed batch.
func (s *Store) dropStaged() error {
	dir := filepath.Join(s.dir, stagingName)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return storeErr("recover", err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return storeErr("recover", err)
		}
	}
	return nil
}

func (s *Store) hasJournal() bool {
	_, err := os.Stat(filepath.Join(s.dir, journalName))
	return err == nil
}

// step is the crash-test hook; see Store.crash.
func (s *Store) step(name string) error {
	if s.crash == nil {
		return nil
	}
	return s.crash(name)
}

func batchID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
