// Package opfile reads the operator's own small files — keys, tokens,
// secrets, policies — with a size cap, and stats the file it read rather
// than the path again, so a file swapped between the check and the read
// is never the one judged.
package opfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Caps for the kinds of file the commands read. A key or token file is a
// few lines; a policy file is text an operator writes by hand.
const (
	MaxSecretBytes = 64 << 10 // keys, tokens, signing secrets
	MaxPolicyBytes = 4 << 20  // Cedar policy sets
)

// ErrTooLarge is wrapped by Read for a file over its cap.
var ErrTooLarge = errors.New("file too large")

// Read returns the contents of the file at path and its FileInfo (from
// the open file), refusing one larger than max bytes or one that is not
// a regular file.
func Read(path string, max int64) ([]byte, fs.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a regular file (%v)", path, info.Mode().Type())
	}
	if info.Size() > max {
		return nil, nil, fmt.Errorf("%w: %s is %d bytes; the limit is %d", ErrTooLarge, path, info.Size(), max)
	}
	// The size can change after Stat; read one byte past the cap to know.
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(b)) > max {
		return nil, nil, fmt.Errorf("%w: %s grew past the limit of %d bytes while being read", ErrTooLarge, path, max)
	}
	return b, info, nil
}
