package kanban

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// appriseScheme is the start of an Apprise URL: a service's scheme.
var appriseScheme = regexp.MustCompile(`^[a-z][a-z0-9+.-]{0,31}://[^/]`)

// CheckChannel validates a channel before it is stored: its name, type,
// URL (one URL, no spaces or control characters; an Apprise channel's may
// be a "secret:NAME" reference to a named secret holding it; a webhook's is http or
// https with a host and no credentials), its secret (a webhook's signing
// secret is required, an Apprise channel has none) and its events. Its
// errors name the fields, never their values.
func CheckChannel(c Channel) error {
	if err := CheckLine("name", c.Name, true, MaxNameLen); err != nil {
		return err
	}
	if !slices.Contains(ChannelTypes, c.Type) {
		return FieldError("type", "must be apprise or webhook")
	}
	if err := CheckChannelURL(c.Type, c.URL.Reveal()); err != nil {
		return err
	}
	if err := checkChannelSecret(c.Type, c.Secret.Reveal()); err != nil {
		return err
	}
	return CheckNotificationKinds("events", c.Events)
}

// CheckChannelURL validates the URL of a channel of type t.
func CheckChannelURL(t ChannelType, u string) error {
	if u == "" {
		return FieldError("url", "is required")
	}
	if len(u) > MaxChannelURLLen {
		return FieldError("url", "longer than %d bytes", MaxChannelURLLen)
	}
	if !validURLText(u) {
		return FieldError("url", "must be one URL without spaces or control characters")
	}
	if t == ChannelApprise {
		if _, ref := SecretRef(u); !ref && !appriseScheme.MatchString(u) {
			return FieldError("url", `must be an Apprise URL (service://…) or "secret:NAME"`)
		}
		return nil
	}
	p, err := url.Parse(u)
	switch {
	case err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.Opaque != "":
		return FieldError("url", "must be an http or https URL with a host")
	case p.User != nil:
		return FieldError("url", "must not carry credentials (the signing secret authenticates the webhook)")
	case p.Fragment != "" || strings.Contains(u, "#"):
		return FieldError("url", "must not have a fragment")
	}
	return nil
}

func validURLText(u string) bool {
	for _, r := range u {
		if r == unicode.ReplacementChar || unicode.IsControl(r) || unicode.IsSpace(r) || r > unicode.MaxASCII && !unicode.IsPrint(r) {
			return false
		}
	}
	return strings.ToValidUTF8(u, "") == u
}

func checkChannelSecret(t ChannelType, s string) error {
	if t == ChannelApprise {
		if s != "" {
			return FieldError("secret", "only a webhook has a signing secret")
		}
		return nil
	}
	if len(s) < MinWebhookSecretLen || len(s) > MaxWebhookSecretLen {
		return FieldError("secret", "must be %d to %d bytes", MinWebhookSecretLen, MaxWebhookSecretLen)
	}
	return SingleLine("secret", s)
}

// CheckNotificationKinds validates a set of kinds: each declared, once.
func CheckNotificationKinds(field string, ks []NotificationKind) error {
	for i, k := range ks {
		if !k.Valid() {
			return FieldError(field, "must name notification kinds (%s)", kindList())
		}
		if slices.Contains(ks[:i], k) {
			return FieldError(field, "names a kind twice")
		}
	}
	return nil
}

func kindList() string {
	s := make([]string, len(NotificationKinds))
	for i, k := range NotificationKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// URLHint is what a caller may see of a channel's URL: its scheme.
func URLHint(u string) string {
	if i := strings.Index(u, "://"); i > 0 && i <= 32 {
		return u[:i] + "://…"
	}
	return "…"
}
