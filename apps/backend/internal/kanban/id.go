package kanban

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewID returns a random RFC 4122 version-4 UUID string. IDs are generated
// in Go, never by the database, so the SQL stays portable.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error since Go 1.24.
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// Now returns the current time in UTC truncated to microseconds, the
// precision timestamps are stored with.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
