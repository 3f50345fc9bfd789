package remote

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// recordMu serialises the keys trust on first use appends to known_hosts
// files (two sessions of one profile may meet a new host at once).
var recordMu sync.Mutex

// hostKeys checks a host's key against a known_hosts file, and records
// the key of a host the file does not know when tofu is set.
type hostKeys struct {
	file string
	tofu bool

	mu   sync.Mutex
	want []knownhosts.KnownKey // the keys the file records, from the last mismatch
	got  string                // the type of the key the host offered then
}

// check is the ssh.HostKeyCallback.
func (h *hostKeys) check(hostname string, remote net.Addr, key ssh.PublicKey) error {
	recordMu.Lock()
	defer recordMu.Unlock()
	cb, err := h.callback()
	if err != nil {
		return err
	}
	err = cb(hostname, remote, key)
	var ke *knownhosts.KeyError
	var re *knownhosts.RevokedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re):
		return ErrHostKeyMismatch
	case errors.As(err, &ke) && len(ke.Want) > 0:
		h.mu.Lock()
		h.want, h.got = ke.Want, key.Type()
		h.mu.Unlock()
		return ErrHostKeyMismatch
	case errors.As(err, &ke) && h.tofu:
		return h.record(hostname, key)
	case errors.As(err, &ke):
		return ErrHostKeyUnknown
	}
	return fmt.Errorf("%w: it could not be parsed", ErrKnownHosts)
}

// callback reads the file (a missing one knows no host: with tofu it is
// created at the first record, else every host is unknown).
func (h *hostKeys) callback() (ssh.HostKeyCallback, error) {
	st, err := os.Stat(h.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !h.tofu {
			return nil, fmt.Errorf("%w: it does not exist on the backend's machine (create it, e.g. with ssh-keyscan, or set trust_on_first_use)", ErrKnownHosts)
		}
		return func(string, net.Addr, ssh.PublicKey) error { return &knownhosts.KeyError{} }, nil
	case err != nil || !st.Mode().IsRegular():
		return nil, fmt.Errorf("%w: it is not a readable regular file", ErrKnownHosts)
	}
	cb, err := knownhosts.New(h.file)
	if err != nil {
		return nil, fmt.Errorf("%w: it could not be parsed", ErrKnownHosts)
	}
	return cb, nil
}

// record appends the host's key to the file (created 0600 when missing).
func (h *hostKeys) record(hostname string, key ssh.PublicKey) error {
	f, err := os.OpenFile(h.file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600) //nolint:gosec // the operator's configured known_hosts file
	if err != nil {
		return fmt.Errorf("%w: the host's key could not be recorded in it", ErrKnownHosts)
	}
	_, err = fmt.Fprintln(f, knownhosts.Line([]string{knownhosts.Normalize(hostname)}, key))
	if err = errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("%w: the host's key could not be recorded in it", ErrKnownHosts)
	}
	return nil
}

// otherType reports whether the last mismatch was a key of a type the
// file records none of for the host (then a redial asks for those types).
func (h *hostKeys) otherType() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.want) == 0 {
		return false
	}
	for _, k := range h.want {
		if k.Key.Type() == h.got {
			return false
		}
	}
	return true
}

// wantAlgorithms are the host key algorithms of the recorded keys.
func (h *hostKeys) wantAlgorithms() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, k := range h.want {
		switch t := k.Key.Type(); t {
		case ssh.KeyAlgoRSA:
			out = append(out, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
		default:
			out = append(out, t)
		}
	}
	return out
}
