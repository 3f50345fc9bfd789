package gate

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// scalar scans a string, number or literal at s.pos and records the
// top-level id and method values.
func (s *scanner) scalar() failure {
	start := s.pos
	top := s.depth == 1 && s.next != memberOther
	switch c := s.data[s.pos]; {
	case c == '"':
		escaped, f := s.str()
		if f != failNone {
			return f
		}
		if top {
			s.noteString(s.data[start:s.pos], escaped)
		}
	case c == '-' || c >= '0' && c <= '9':
		integer, f := s.number()
		if f != failNone {
			return f
		}
		if top && s.next == memberID {
			s.idState = idOther
			if integer {
				s.idState, s.id = idEcho, s.data[start:s.pos]
			}
		}
	default:
		var lit string
		switch c {
		case 't':
			lit = "true"
		case 'f':
			lit = "false"
		case 'n':
			lit = "null"
		default:
			return failSyntax
		}
		if !bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
			return failSyntax
		}
		s.pos += len(lit)
		if top && s.next == memberID {
			s.idState = idBad
			if c == 'n' {
				s.idState = idNull
			}
		}
	}
	return failNone
}

// noteString records a top-level string value; tok includes the quotes.
func (s *scanner) noteString(tok []byte, escaped bool) {
	raw := tok[1 : len(tok)-1]
	switch s.next {
	case memberID:
		s.idState = idOther
		if len(raw) <= MaxIDStringLen {
			s.idState, s.id = idEcho, tok
		}
	case memberMethod:
		if escaped {
			raw = unescape(nil, raw)
		}
		s.toolsCall = string(raw) == "tools/call"
	}
}

// str scans the string starting at s.pos (a '"') and leaves s.pos after its
// closing quote. It reports whether the string contains escapes.
func (s *scanner) str() (escaped bool, f failure) {
	d := s.data
	for i := s.pos + 1; i < len(d); {
		c := d[i]
		switch {
		case c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\':
			i++
		case c == '"':
			s.pos = i + 1
			return escaped, failNone
		case c == '\\':
			escaped = true
			n, f := escapeLen(d[i:])
			if f != failNone {
				return false, f
			}
			i += n
		case c < 0x20:
			return false, failSyntax
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				return false, failUTF8
			}
			i += size
		}
	}
	return false, failSyntax
}

// escapeLen validates the escape sequence at the start of b (b[0] == '\\')
// and returns its length. A \u escape of a UTF-16 surrogate must be a high
// surrogate directly followed by an escaped low one: encoding/json would turn
// a lone one into U+FFFD silently.
func escapeLen(b []byte) (int, failure) {
	if len(b) < 2 {
		return 0, failSyntax
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, failNone
	case 'u':
	default:
		return 0, failSyntax
	}
	r, ok := hex4(b[2:])
	if !ok {
		return 0, failSyntax
	}
	if !utf16.IsSurrogate(r) {
		return 6, failNone
	}
	if r >= 0xDC00 || len(b) < 8 || b[6] != '\\' || b[7] != 'u' {
		return 0, failSurrogate
	}
	lo, ok := hex4(b[8:])
	if !ok {
		return 0, failSyntax
	}
	if lo < 0xDC00 || lo > 0xDFFF {
		return 0, failSurrogate
	}
	return 12, failNone
}

// hex4 decodes four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// unescape appends the decoded form of raw, a string body already validated
// by str, to dst.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'u':
			r, _ := hex4(raw[i+2:])
			n := 6
			if utf16.IsSurrogate(r) {
				lo, _ := hex4(raw[i+8:])
				r, n = utf16.DecodeRune(r, lo), 12
			}
			dst = utf8.AppendRune(dst, r)
			i += n
			continue
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		default: // '"', '\\', '/'
			c = raw[i+1]
		}
		dst = append(dst, c)
		i += 2
	}
	return dst
}

// number scans a number token at s.pos and reports whether it is an integer
// (no fraction or exponent).
func (s *scanner) number() (integer bool, f failure) {
	d, i := s.data, s.pos
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(d, i)
	default:
		return false, failSyntax
	}
	integer = true
	if i < len(d) && d[i] == '.' {
		integer = false
		if i+1 == len(d) || !isDigit(d[i+1]) {
			return false, failSyntax
		}
		i = digits(d, i+1)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		integer = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i == len(d) || !isDigit(d[i]) {
			return false, failSyntax
		}
		i = digits(d, i)
	}
	if i-s.pos > MaxNumberLen {
		return false, failLongNumber
	}
	if i < len(d) && !isSpace(d[i]) && d[i] != ',' && d[i] != '}' && d[i] != ']' {
		return false, failSyntax // e.g. "01" or "1x": the token is not complete
	}
	s.pos = i
	return integer, failNone
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digits(d []byte, i int) int {
	for i < len(d) && isDigit(d[i]) {
		i++
	}
	return i
}
