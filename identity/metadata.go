package identity

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// WellKnownPath is where the Protected Resource Metadata document is
// served (RFC 9728 §3); the resource's path is appended for the
// path-suffixed form (/.well-known/oauth-protected-resource/mcp).
const WellKnownPath = "/.well-known/oauth-protected-resource"

// Metadata is the Protected Resource Metadata document.
type Metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

type metadata struct {
	doc   []byte
	url   string          // the document's URL, named in the challenge
	paths map[string]bool // where it is served
}

func newMetadata(resource string, o *OAuth) (metadata, error) {
	if resource == "" {
		resource = "http://localhost/"
	}
	u, err := url.Parse(resource)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return metadata{}, fmt.Errorf("identity: resource %q: want an absolute http(s) URL without user information, query or fragment", resource)
	}
	m := Metadata{Resource: u.String(), BearerMethodsSupported: []string{"header"}, ResourceName: "EWP gate"}
	if o != nil {
		m.AuthorizationServers = []string{o.Issuer}
	}
	doc, err := json.Marshal(m)
	if err != nil {
		return metadata{}, err
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	md := metadata{doc: append(doc, '\n'), paths: map[string]bool{WellKnownPath: true, WellKnownPath + path: true}}
	md.url = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: WellKnownPath + u.Path}).String()
	md.url = strings.TrimSuffix(md.url, "/")
	return md, nil
}

// IsMetadataPath is whether path is where the PRM document is served.
func (a *Authenticator) IsMetadataPath(path string) bool { return a.meta.paths[path] }

// MetadataURL is the PRM document's URL, as the challenge names it.
func (a *Authenticator) MetadataURL() string { return a.meta.url }

// ServeMetadata answers a GET (or HEAD) of the PRM document.
func (a *Authenticator) ServeMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the protected resource metadata is read with GET", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=3600")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(a.meta.doc)
	}
}

// Challenge answers a refused credential: 401 with
// WWW-Authenticate: Bearer resource_metadata="…" (and RFC 6750's error
// for a bad token), or 503 when the register could not be read. The body
// says why in words; it never holds the token.
func (a *Authenticator) Challenge(w http.ResponseWriter, err error) {
	e, ok := err.(*Error)
	if !ok {
		e = &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Reason: "the credential was refused"}
	}
	if e.Status == http.StatusUnauthorized {
		v := fmt.Sprintf("Bearer resource_metadata=%q", a.meta.url)
		if e.Code != "" {
			v += fmt.Sprintf(", error=%q, error_description=%q", e.Code, headerSafe(e.Reason))
		}
		w.Header().Set("WWW-Authenticate", v)
	}
	body, _ := json.Marshal(map[string]string{"error": errorName(e), "error_description": e.Reason})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(body, '\n'))
}

func errorName(e *Error) string {
	switch {
	case e.Code != "":
		return e.Code
	case e.Status == http.StatusUnauthorized:
		return "unauthorized"
	}
	return "temporarily_unavailable"
}

// headerSafe keeps a reason inside a quoted-string: RFC 6750 allows
// printable ASCII except '"' and '\' in error_description.
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '\''
		}
		return r
	}, s)
}
