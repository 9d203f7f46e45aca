package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/notify"
	"github.com/ewp-go/ewp/internal/opfile"
)

// notifyFlags is the webhook that hears of every new pending decision.
type notifyFlags struct {
	url, secretFile, format string
}

func (n *notifyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&n.url, "notify-url", "", "")
	fs.StringVar(&n.secretFile, "notify-secret-file", "", "")
	fs.StringVar(&n.format, "notify-format", string(notify.FormatGeneric), "")
}

// check refuses a half-given or malformed webhook before anything starts.
func (n notifyFlags) check(auditOffGiven bool) error {
	if n.url == "" {
		if n.secretFile != "" {
			return errors.New("--notify-secret-file needs --notify-url, the webhook to sign for")
		}
		return nil
	}
	u, err := url.Parse(n.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("--notify-url: want an http:// or https:// URL of the webhook")
	}
	if n.secretFile == "" {
		return errors.New("--notify-url needs --notify-secret-file FILE: every notice is signed with the secret in it (HMAC-SHA256)")
	}
	if _, err := notify.ParseFormat(n.format); err != nil {
		return fmt.Errorf("--notify-format %q: want generic, slack or teams", n.format)
	}
	if auditOffGiven {
		return errors.New("--notify-url tells of decisions awaiting confirmation, but --audit off records none")
	}
	return nil
}

// withNotifications wraps l so that each REQUIRE_CONFIRMATION it records
// is POSTed to --notify-url; l itself when no webhook is configured. The
// secret is read here and never printed; the URL is not logged either (a
// Slack or Teams webhook URL is itself a credential).
func withNotifications(n notifyFlags, l audit.Log, log *slog.Logger) (audit.Log, error) {
	if n.url == "" {
		return l, nil
	}
	secret, err := readSecretFile(n.secretFile, log)
	if err != nil {
		return nil, err
	}
	format, _ := notify.ParseFormat(n.format)
	nt, err := notify.New(notify.Config{URL: n.url, Secret: secret, Format: format, Logger: log})
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(n.url)
	log.Info("notifying pending decisions", "webhook_host", u.Host, "format", format,
		"signature_header", notify.HeaderSignature, "queue", notify.DefaultQueueSize)
	return notify.Wrap(l, nt), nil
}

// readSecretFile reads the webhook's signing secret: refused empty or
// short, warned about when others may read it.
func readSecretFile(path string, log *slog.Logger) ([]byte, error) {
	b, info, err := opfile.Read(path, opfile.MaxSecretBytes)
	if err != nil {
		return nil, fmt.Errorf("--notify-secret-file: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		log.Warn("the webhook secret file is readable by others; chmod 600 it", "file", path, "mode", info.Mode().Perm().String())
	}
	secret := strings.TrimSpace(string(b))
	if len(secret) < minTokenBytes {
		return nil, fmt.Errorf("--notify-secret-file %s holds %d bytes; a signing secret needs at least %d (e.g. `openssl rand -hex 32 > %s`)",
			path, len(secret), minTokenBytes, path)
	}
	return []byte(secret), nil
}
