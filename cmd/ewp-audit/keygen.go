package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/user"
	"path/filepath"

	"github.com/ewp-go/ewp/audit"
)

// defaultKeyFile is where an operator's private key lives unless --key or
// --out says otherwise: ~/.ewp/operator.key.
func defaultKeyFile() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory to find ~/.ewp/operator.key in (%v); name the key file with --key", err)
	}
	return filepath.Join(home, ".ewp", "operator.key"), nil
}

// keyFile is the --key (or --out) flag's value with its default.
func keyFile(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	return defaultKeyFile()
}

// runKeygen writes a new operator key and prints the public key line for
// the server's operator keys file. The private key is never printed.
func runKeygen(e *env, args []string) int {
	var out, name string
	var asJSON bool
	fs := flag.NewFlagSet("keygen", flag.ContinueOnError)
	fs.StringVar(&out, "out", "", "")
	fs.StringVar(&name, "name", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, code := parse(e, fs, usageKeygen, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 0 {
		return usageError(e.stderr, "keygen: takes no arguments (the key file is --out FILE)")
	}
	path, err := keyFile(out)
	if err != nil {
		return usageError(e.stderr, "keygen: "+err.Error())
	}
	if name == "" {
		if name, err = loginName(); err != nil {
			return usageError(e.stderr, "keygen: "+err.Error())
		}
	}
	s, err := audit.GenerateSigner(name)
	if err != nil {
		return usageError(e.stderr, "keygen: --name: "+err.Error())
	}
	if err := s.WriteFile(path); err != nil {
		fmt.Fprintf(e.stderr, "ewp-audit keygen: %v\n", err)
		return exitLog
	}
	if asJSON {
		return printJSON(e, map[string]string{"key_file": path, "key_id": s.KeyID(), "name": s.Name, "public_line": s.PublicLine()})
	}
	fmt.Fprintf(e.stdout, "wrote operator key %s (%s) to %s, readable by you alone; never let an agent read it.\n", s.Name, s.KeyID(), path)
	fmt.Fprintf(e.stdout, "Add this line to the server's operator keys file (ewp-mcp --operator-keys FILE):\n%s\n", s.PublicLine())
	return exitOK
}

// loginName is the name a key signs as by default: the OS login.
func loginName() (string, error) {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username, nil
	}
	if n := os.Getenv("USER"); n != "" {
		return n, nil
	}
	return "", errors.New("cannot tell your login name; give the key's name with --name NAME")
}
