// Package pgurl is the one place that knows how this project opens
// PostgreSQL: whether a --db value names it, how to print a connection
// string without its secrets, the settings every pool and connection
// gets (Settings: the connection string's win, then the store's options,
// then the defaults here), and the advisory lock keys the stores take.
// The ledger's and the decision log's stores both open through it, so one
// --db value configures them alike.
//
// A connection string is printed in start-up logs, hints ("keep it:
// verify --db …") and errors. Whatever form it takes — a URL with a
// password in its user info or in a query parameter, a libpq key=value
// string, or text that does not parse at all — Redact leaves no secret in
// it: a value is masked whenever its key might name one, and a URL that
// cannot be read with certainty is masked from its user info to its last
// '@'. Masking too much only costs the reader detail.
package pgurl

import (
	"net/url"
	"strings"
)

// Mask replaces every secret Redact hides.
const Mask = "xxxxx"

// IsPostgres reports whether s names a PostgreSQL database (what pgx
// accepts as a URL); anything else is a file path.
func IsPostgres(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// secretKey reports whether a connection parameter's value may be a
// secret: libpq's and pgx's password, sslpassword (the client key's
// passphrase), oauth_client_secret, and, failing safe, any key that
// mentions a password, passphrase, secret, token or key (sslkey is a
// path: masked all the same).
func secretKey(key string) bool {
	k := strings.ToLower(key)
	for _, s := range []string{"pass", "secret", "token", "key"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// Redact returns s with every secret in it masked (see the package doc).
// A file path without key=value pairs comes back as it is.
func Redact(s string) string {
	r, _ := redact(s)
	return r
}

// redact is Redact that also returns the masked values as they appeared
// in s, for Scrub.
func redact(s string) (string, []string) {
	var hidden []string
	if !IsPostgres(s) {
		return maskPairs(s, false, &hidden), hidden
	}
	u, err := url.Parse(s)
	if err != nil || doubtful(u) {
		return redactUnparsable(s, &hidden), hidden
	}
	if p, ok := u.User.Password(); ok {
		hidden = append(hidden, rawPassword(s), p)
		u.User = url.UserPassword(u.User.Username(), Mask)
	}
	u.RawQuery = maskPairs(u.RawQuery, true, &hidden)
	return u.String(), hidden
}

// doubtful reports a URL that parsed but perhaps not as the person meant:
// an '@' after the host (a password holding '/', '?' or '#' ends the
// host early, leaving the rest of it in the path) or a fragment.
func doubtful(u *url.URL) bool {
	return u.Opaque != "" || u.Fragment != "" || strings.Contains(u.Path, "@") || strings.Contains(u.RawPath, "@")
}

// rawPassword is the user-info password as written in a URL that parsed.
func rawPassword(s string) string {
	rest := s[strings.Index(s, "://")+3:]
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	at := strings.LastIndex(rest, "@")
	colon := strings.Index(rest, ":")
	if at < 0 || colon < 0 || colon > at {
		return ""
	}
	return rest[colon+1 : at]
}

// redactUnparsable masks a URL url.Parse refused (a password with %zz or
// a space) or read doubtfully: everything between the first ':' after
// the scheme and the last '@' (the widest the user info can be), then
// every secret-looking query pair.
func redactUnparsable(s string, hidden *[]string) string {
	i := strings.Index(s, "://") + 3
	scheme, rest := s[:i], s[i:]
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if colon := strings.Index(rest[:at], ":"); colon >= 0 {
			*hidden = append(*hidden, rest[colon+1:at])
			rest = rest[:colon+1] + Mask + rest[at:]
		}
	}
	return scheme + maskPairs(rest, true, hidden)
}

// maskPairs masks the value of every key=value pair in s whose key may
// name a secret. In a URL (inURL) keys are percent-decoded, one that does
// not decode counts as secret, and a value runs to the next '&' or '#';
// in a libpq key=value string spaces may surround '=', a value is quoted
// ('…', with backslash escapes) or runs to the next space, and an
// unterminated quote runs to the end.
func maskPairs(s string, inURL bool, hidden *[]string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			continue
		}
		if !maskKey(keyBefore(s, i, inURL), inURL) {
			continue
		}
		start, end := valueSpan(s, i+1, inURL)
		if start == end {
			continue
		}
		*hidden = append(*hidden, s[start:end])
		b.WriteString(s[last:start])
		b.WriteString(Mask)
		last, i = end, end-1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// keyBefore is the key of the '=' at s[eq]: the run of key characters
// before it (spaces between them allowed outside URLs).
func keyBefore(s string, eq int, inURL bool) string {
	end := eq
	if !inURL {
		for end > 0 && s[end-1] == ' ' {
			end--
		}
	}
	start := end
	for start > 0 && keyByte(s[start-1]) {
		start--
	}
	return s[start:end]
}

func keyByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c == '%' || c == '+' ||
		('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// maskKey reports whether the value of key is masked: a key that may name
// a secret, also once percent-decoded in a URL, where one that does not
// decode is masked too (it cannot be told apart from password).
func maskKey(key string, inURL bool) bool {
	if secretKey(key) {
		return true
	}
	if !inURL {
		return false
	}
	k, err := url.QueryUnescape(key)
	return err != nil || secretKey(k)
}

// valueSpan is where the value after '=' at from begins and ends.
func valueSpan(s string, from int, inURL bool) (int, int) {
	if inURL {
		end := strings.IndexAny(s[from:], "&#")
		if end < 0 {
			return from, len(s)
		}
		return from, from + end
	}
	for from < len(s) && s[from] == ' ' {
		from++
	}
	i := from
	if i < len(s) && s[i] == '\'' {
		for i++; i < len(s) && s[i] != '\''; i++ {
			if s[i] == '\\' {
				i++
			}
		}
		return from, min(i+1, len(s))
	}
	for ; i < len(s) && s[i] != ' '; i++ {
		if s[i] == '\\' {
			i++
		}
	}
	return from, min(i, len(s))
}

// Scrub returns err with every secret of dsn masked in its text (in the
// forms a driver may quote it: as written and percent-decoded), still
// matching what err matched under errors.Is and errors.As. Errors from
// parsing or connecting may quote the connection string they were given.
func Scrub(dsn string, err error) error {
	if err == nil {
		return nil
	}
	_, hidden := redact(dsn)
	text := err.Error()
	clean := text
	for _, h := range hidden {
		clean = hide(clean, h)
		if d, derr := url.QueryUnescape(h); derr == nil {
			clean = hide(clean, d)
		}
		if d, derr := url.PathUnescape(h); derr == nil {
			clean = hide(clean, d)
		}
	}
	if clean == text {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

func hide(text, secret string) string {
	if secret == "" || secret == Mask {
		return text
	}
	return strings.ReplaceAll(text, secret, Mask)
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }
