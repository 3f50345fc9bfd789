// Package escape renders text that Kandev did not write — upstream tool
// names, schema keys, upstream messages — safe to show in an error, a log
// line or an operator report: every character that is not printable
// (control, format and bidi characters, invalid UTF-8) is escaped, and the
// result is clipped to a byte budget on a character boundary.
//
// It imports only the standard library.
package escape

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ellipsis marks a clipped excerpt.
const ellipsis = "..."

// Needed reports whether s holds anything Excerpt would escape.
func Needed(s string) bool {
	i := printableASCIIPrefix(s)
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// Bytes of a word, for printableASCIIPrefix.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// printableASCIIPrefix returns the length of the longest prefix of s, in
// whole 8-byte words, whose bytes are all printable ASCII (0x20-0x7e): the
// bytes Needed passes over without decoding.
func printableASCIIPrefix(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		// A byte of 0x80 or more, one below 0x20 (exact once the high
		// bits are clear), or one equal to 0x7f (zero after the xor).
		x := w ^ (0x7f * ones)
		if w&highs != 0 || (w-0x20*ones)&^w&highs != 0 || (x-ones)&^x&highs != 0 {
			break
		}
	}
	return i
}

// Excerpt returns s with every non-printable character escaped (\x1b,
// \u202e, \xff for a byte of invalid UTF-8) and clipped to at most max bytes,
// ending in "..." when anything was cut. Escapes are never split. A max
// below 4 is treated as 4.
func Excerpt(s string, max int) string {
	max = maxOf(max, len(ellipsis)+1)
	if len(s) <= max && !Needed(s) {
		return s
	}
	var b strings.Builder
	b.Grow(min(len(s), max))
	var buf [16]byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		piece := render(buf[:0], r, s[i], size)
		// Keep room for the ellipsis unless this is the very end.
		room := max - b.Len()
		if i+size < len(s) {
			room -= len(ellipsis)
		}
		if len(piece) > room {
			b.WriteString(ellipsis)
			return b.String()
		}
		b.Write(piece)
		i += size
	}
	return b.String()
}

// render appends r's rendering: itself when printable, else an escape.
func render(dst []byte, r rune, first byte, size int) []byte {
	switch {
	case r == utf8.RuneError && size <= 1:
		return append(append(dst, `\x`...), hex2(first)...)
	case unicode.IsPrint(r):
		return utf8.AppendRune(dst, r)
	case r < 0x80:
		return append(dst, '\\', 'x', hexDigits[r>>4], hexDigits[r&0xf])
	case r <= 0xffff:
		return append(dst, `\u`+pad(strconv.FormatInt(int64(r), 16), 4)...)
	}
	return append(dst, `\U`+pad(strconv.FormatInt(int64(r), 16), 8)...)
}

const hexDigits = "0123456789abcdef"

func hex2(c byte) string { return string([]byte{hexDigits[c>>4], hexDigits[c&0xf]}) }

func pad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}

func maxOf(a, b int) int {
	if a > b {
		return a
	}
	return b
}
