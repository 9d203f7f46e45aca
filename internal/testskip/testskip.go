// Package testskip names the reasons a test may skip for want of
// something outside the repository, so the skip messages and the test
// summary (scripts/testrun) agree on them: each such message begins with
// one of these tags and a colon.
package testskip

// Tags a skip message begins with, followed by ": " and the detail.
const (
	PostgreSQL = "no PostgreSQL" // initdb and pg_ctl, or EWP_TEST_POSTGRES_URL
	Chromium   = "no chromium"   // Debian's chromium, for the browser tests
	Shared     = "no ../shared"  // the read-only material beside the checkout
	// Clients: an npm client set of scripts/clients/ is not installed
	// (its install.sh puts it under $EWP_CLIENTS_DIR, outside the repo).
	Clients = "no npm clients"
	// Helper marks a test function that is only a child process's entry
	// point: it skips when run by go test, and nothing is missing.
	Helper = "helper process"
)

// Advice is what a person can do about each tag, as the summary says it.
var Advice = map[string]string{
	PostgreSQL: "PostgreSQL not found (install postgresql: the tests start their own throwaway clusters; or set EWP_TEST_POSTGRES_URL)",
	Chromium:   "chromium not found (install Debian's chromium: apt-get install -y chromium)",
	Clients:    "npm client sets not installed (run scripts/clients/SET/install.sh: npm ci into ${EWP_CLIENTS_DIR:-~/.cache/ewp-clients}/SET)",
	Shared:     "../shared absent (the reference pack, the differential corpus and the grounding pack, beside the checkout; CI has it)",
	Helper:     "helper processes (each runs when its parent test starts it; nothing is missing)",
}

// Message is tag and detail as a skip message.
func Message(tag, detail string) string { return tag + ": " + detail }
