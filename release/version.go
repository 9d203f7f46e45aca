package release

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/ewp-go/ewp"
	"github.com/ewp-go/ewp/warrant"
)

// IsVersionFlag reports whether args ask for the version alone
// (--version or -version), so that every command can answer it before
// parsing anything else.
func IsVersionFlag(args []string) bool {
	return len(args) == 1 && (args[0] == "--version" || args[0] == "-version")
}

// PrintVersion prints what the binary command was built from: the
// protocol, the policy, and the release lock embedded at build time (its
// version, digest and named sets).
func PrintVersion(w io.Writer, command string) {
	fmt.Fprintf(w, "%s: protocol %s, policy %s\n", command, warrant.ProtocolVersion, warrant.PolicyID)
	var l Lock
	if err := json.Unmarshal(ewp.ReleaseLock, &l); err != nil {
		fmt.Fprintf(w, "lock: unreadable %s (%v)\n", LockFile, err)
		return
	}
	fmt.Fprintf(w, "lock: %s version %s, digest %s\n", LockFile, l.Version, l.Digest)
	for _, set := range sortedKeys(l.Sets) {
		fmt.Fprintf(w, "  %-24s %s\n", set, l.Sets[set])
	}
}

// AnswerVersion answers "--version" for a command: when it is the whole
// command line, it prints PrintVersion's lines and exits 0. Every
// command's main calls it first.
func AnswerVersion(command string) {
	if IsVersionFlag(os.Args[1:]) {
		PrintVersion(os.Stdout, command)
		os.Exit(0)
	}
}
