package audit

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/ewp-go/ewp/internal/opfile"
)

// The operator keys file (ewp-mcp --operator-keys) holds one public key a
// line: "ed25519 BASE64 NAME", BASE64 the 32-byte public key, NAME the
// approver it signs as. Blank lines and lines starting with # are
// ignored; anything else is an error naming its line.

// ParseOperatorKeys reads an operator keys file from r; source names it
// in errors. Keys and names are unique within the file.
func ParseOperatorKeys(r io.Reader, source string) (*OperatorKeys, error) {
	keys := &OperatorKeys{byID: map[string]OperatorKey{}}
	names := map[string]int{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("operator keys %s line %d: %s", source, n, fmt.Sprintf(format, args...))
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "ed25519" {
			return nil, bad(`want "ed25519 BASE64-PUBLIC-KEY NAME" (the line ewp-audit keygen prints), a comment (#) or a blank line`)
		}
		pub, err := base64.StdEncoding.DecodeString(f[1])
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return nil, bad("the key is not %d bytes of standard base64 (a private key does not belong here)", ed25519.PublicKeySize)
		}
		if err := checkKeyName(f[2]); err != nil {
			return nil, bad("%v", err)
		}
		if prev, ok := names[f[2]]; ok {
			return nil, bad("name %q is already given to the key on line %d; a name signs as one key", f[2], prev)
		}
		id := KeyID(pub)
		if prev, ok := keys.byID[id]; ok {
			return nil, bad("the key is already listed as %q", prev.Name)
		}
		names[f[2]] = n
		keys.byID[id] = OperatorKey{Name: f[2], Public: pub}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("operator keys %s: %w", source, err)
	}
	return keys, nil
}

// LoadOperatorKeys reads the operator keys file at path; a file with no
// key is refused, since it would make every approval fail.
func LoadOperatorKeys(path string) (*OperatorKeys, error) {
	b, _, err := opfile.Read(path, opfile.MaxSecretBytes)
	if err != nil {
		return nil, fmt.Errorf("operator keys: %w", err)
	}
	keys, err := ParseOperatorKeys(bytes.NewReader(b), path)
	if err != nil {
		return nil, err
	}
	if keys.Len() == 0 {
		return nil, fmt.Errorf("operator keys %s holds no key; add the line `ewp-audit keygen` prints", path)
	}
	return keys, nil
}

// privateTag starts the one key line of an operator's private key file.
const privateTag = "ed25519-private"

// GenerateSigner makes a new operator key named name.
func GenerateSigner(name string) (*Signer, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, err
	}
	return NewSigner(name, seed)
}

// WriteFile stores the private key at path, readable by its owner alone
// (0600, its directory created 0700), and refuses to replace a file: a
// lost key is a new key, never a silently overwritten one.
func (s *Signer) WriteFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("operator key %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("operator key %s already exists; it is not replaced (give another --out, or remove the old key yourself)", path)
	}
	if err != nil {
		return fmt.Errorf("operator key %s: %w", path, err)
	}
	body := "# EWP operator private key: it signs approvals. Keep it readable by you alone; never let an agent read it.\n" +
		privateTag + " " + base64.StdEncoding.EncodeToString(s.priv.Seed()) + " " + s.Name + "\n"
	_, err = f.WriteString(body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("operator key %s: %w", path, err)
	}
	return nil
}

// LoadSigner reads an operator's private key file. A file that others can
// read is refused: an agent running as another user must not be able to
// sign.
func LoadSigner(path string) (*Signer, error) {
	// The mode checked is the mode of the file read (opfile stats the
	// open file), never of whatever the path names a moment later.
	b, info, err := opfile.Read(path, opfile.MaxSecretBytes)
	if err != nil {
		return nil, fmt.Errorf("operator key: %w (make one with `ewp-audit keygen`)", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("operator key %s is readable by others (mode %v); chmod 600 it", path, info.Mode().Perm())
	}
	var s *Signer
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		seed, derr := []byte(nil), error(nil)
		if len(f) == 3 && f[0] == privateTag {
			seed, derr = base64.StdEncoding.DecodeString(f[1])
		}
		if s != nil || len(f) != 3 || f[0] != privateTag || derr != nil || len(seed) != ed25519.SeedSize {
			return nil, fmt.Errorf("operator key %s line %d: want one line %q as `ewp-audit keygen` writes it", path, n+1, privateTag+" BASE64 NAME")
		}
		if s, err = NewSigner(f[2], seed); err != nil {
			return nil, fmt.Errorf("operator key %s line %d: %w", path, n+1, err)
		}
	}
	if s == nil {
		return nil, fmt.Errorf("operator key %s holds no key", path)
	}
	return s, nil
}

// isBadNameRune: white space and control characters have no place in a
// key's name.
func isBadNameRune(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}
