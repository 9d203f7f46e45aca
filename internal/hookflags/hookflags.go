// Package hookflags holds the flags of the Claude Code command hook's
// local mode, which three command lines take and pass on unchanged:
// `ewp-hook claude-code --db …` (which runs ewp-hook-local), `ewp-hook
// claude-code install --db …` (which writes them into the settings) and
// ewp-hook-local itself. One list, so a flag added to one reaches all.
package hookflags

import "flag"

// Local is the local mode's flags.
type Local struct {
	DB, Audit, Tools, Policies, CallPolicies, Budgets, OperatorKeys, Agent string
}

// Register adds the flags to fs.
func (l *Local) Register(fs *flag.FlagSet) {
	for _, f := range l.all() {
		fs.StringVar(f.value, f.name, "", "")
	}
	fs.StringVar(&l.Agent, "agent", "", "")
}

// Files are the flags that name a file (or, for --db and --audit, a
// PostgreSQL URL), as "--flag" and value, in a fixed order, the unset ones
// left out.
func (l *Local) Files() [][2]string {
	var out [][2]string
	for _, f := range l.all() {
		if *f.value != "" {
			out = append(out, [2]string{"--" + f.name, *f.value})
		}
	}
	return out
}

type named struct {
	name  string
	value *string
}

func (l *Local) all() []named {
	return []named{{"db", &l.DB}, {"audit", &l.Audit}, {"tools", &l.Tools}, {"policies", &l.Policies},
		{"call-policies", &l.CallPolicies}, {"budgets", &l.Budgets}, {"operator-keys", &l.OperatorKeys}}
}
