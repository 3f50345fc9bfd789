package gate

import (
	"bytes"
)

// keySetThreshold is the number of keys per object compared linearly before
// the scanner switches to a map, so huge objects stay linear overall.
const keySetThreshold = 16

// member names a top-level member the gate cares about.
type member uint8

const (
	memberOther member = iota
	memberID
	memberMethod
	memberParams
)

// idState records what the top-level "id" member held.
type idState uint8

const (
	idAbsent idState = iota
	idNull
	idEcho  // echoable: short string or integer token, kept in scanner.id
	idOther // present but not echoable (echo null)
	idBad   // an object, array or boolean: not a JSON-RPC id at all
)

// scanner is a single-pass, non-recursive strict JSON scanner. Its state is
// fixed-size apart from per-depth key lists, so one can be pooled and reused.
type scanner struct {
	data  []byte
	pos   int
	depth int
	stack [MaxDepth + 1]byte // '{' or '[' at depths 1..depth

	// keys[d] holds the first keySetThreshold keys of the object open at
	// depth d (unescaped); sets[d] holds all of them once that is exceeded.
	keys [MaxDepth + 1][][]byte
	sets [MaxDepth + 1]map[string]struct{}

	next         member // member whose value is scanned next (depth 1 only)
	id           []byte
	idState      idState
	toolsCall    bool // top-level "method" is exactly "tools/call"
	paramsObject bool
	inParams     bool // the object open at depth 2 is the params value
	paramsBadKey bool
	memberCase   bool // a top-level key folds to a known member but differs
}

// reset prepares s for data (nil releases references for pooling).
func (s *scanner) reset(data []byte) {
	for d := 0; d <= s.depth && d <= MaxDepth; d++ {
		clear(s.keys[d])
		s.keys[d] = s.keys[d][:0]
		s.sets[d] = nil
	}
	keys := s.keys
	*s = scanner{data: data, keys: keys}
}

// echoID returns the id to echo, or nil for null.
func (s *scanner) echoID() []byte {
	if s.idState == idEcho {
		return s.id
	}
	return nil
}

// notification reports whether the parsed message is an object carrying no
// usable id.
func (s *scanner) notification() bool {
	return s.firstByte() == '{' && (s.idState == idAbsent || s.idState == idNull)
}

// verdict applies the request-level rules after a successful scan.
func (s *scanner) verdict() failure {
	switch s.firstByte() {
	case '{':
	case '[':
		return failBatch
	default:
		return failNotObject
	}
	if s.memberCase {
		return failMemberCase
	}
	if s.idState == idBad {
		return failIDType
	}
	if s.toolsCall {
		if !s.paramsObject {
			return failParamsNotObject
		}
		if s.paramsBadKey {
			return failParamsKeys
		}
	}
	return failNone
}

func (s *scanner) firstByte() byte {
	for _, c := range s.data {
		if !isSpace(c) {
			return c
		}
	}
	return 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) && isSpace(s.data[s.pos]) {
		s.pos++
	}
}

// scan checks the whole message for JSON syntax and the token-level rules.
func (s *scanner) scan() failure {
	s.skipSpace()
	if s.pos == len(s.data) {
		return failEmpty
	}
	for {
		// A value is expected at s.pos.
		s.skipSpace()
		if s.pos == len(s.data) {
			return failSyntax
		}
		if c := s.data[s.pos]; c == '{' || c == '[' {
			if f := s.open(c); f != failNone {
				return f
			}
			s.skipSpace()
			if s.pos < len(s.data) && s.data[s.pos] == c+2 { // '}' or ']'
				s.pos++
				s.close()
			} else {
				if c == '{' {
					if f := s.key(); f != failNone {
						return f
					}
				}
				continue
			}
		} else if f := s.scalar(); f != failNone {
			return f
		}
		// After a value: close containers until a ',' asks for another value.
		if f, more := s.afterValue(); !more {
			return f
		}
	}
}

// afterValue consumes separators and closing brackets after a value. It
// returns more=true when another value is expected at s.pos.
func (s *scanner) afterValue() (f failure, more bool) {
	for {
		s.skipSpace()
		if s.depth == 0 {
			if s.pos != len(s.data) {
				return failTrailing, false
			}
			return failNone, false
		}
		if s.pos == len(s.data) {
			return failSyntax, false
		}
		c, top := s.data[s.pos], s.stack[s.depth]
		s.pos++
		switch {
		case c == ',' && top == '{':
			s.skipSpace()
			if f := s.key(); f != failNone {
				return f, false
			}
			return failNone, true
		case c == ',':
			return failNone, true
		case c == top+2:
			s.close()
		default:
			return failSyntax, false
		}
	}
}

// open pushes the container starting at s.pos.
func (s *scanner) open(c byte) failure {
	if s.depth == MaxDepth {
		return failDepth
	}
	if s.depth == 1 {
		switch s.next {
		case memberParams:
			s.paramsObject = c == '{'
			s.inParams = s.paramsObject
		case memberID:
			s.idState = idBad
		}
	}
	s.pos++
	s.depth++
	s.stack[s.depth] = c
	s.keys[s.depth] = s.keys[s.depth][:0]
	s.sets[s.depth] = nil
	return failNone
}

func (s *scanner) close() {
	clear(s.keys[s.depth])
	s.sets[s.depth] = nil
	s.depth--
	if s.depth == 1 {
		s.inParams = false
	}
}

// key scans an object key at s.pos, checks it for duplicates and the member
// rules, and consumes the following ':'.
func (s *scanner) key() failure {
	if s.pos == len(s.data) || s.data[s.pos] != '"' {
		return failSyntax
	}
	start := s.pos + 1
	escaped, f := s.str()
	if f != failNone {
		return f
	}
	k := s.data[start : s.pos-1]
	if escaped {
		k = unescape(nil, k)
	}
	if !s.addKey(k) {
		if s.depth == 1 && string(k) == "id" {
			s.idState = idOther // which of two ids is meant is unknowable
		}
		return failDuplicateKey
	}
	switch {
	case s.depth == 1:
		s.next = s.topMember(k)
	case s.depth == 2 && s.inParams:
		switch string(k) {
		case "name", "arguments", "_meta":
		default:
			s.paramsBadKey = true
		}
	}
	s.skipSpace()
	if s.pos == len(s.data) || s.data[s.pos] != ':' {
		return failSyntax
	}
	s.pos++
	return failNone
}

// topMember classifies a top-level key. mcp-go decodes the envelope into a
// struct, which matches names case-insensitively ("Method", "paramſ"), so a
// key that folds to a known member must be spelled exactly.
func (s *scanner) topMember(k []byte) member {
	for _, m := range [...]struct {
		name string
		m    member
	}{
		{"id", memberID}, {"method", memberMethod}, {"params", memberParams},
		{"jsonrpc", memberOther}, {"result", memberOther}, {"error", memberOther},
	} {
		if string(k) == m.name {
			return m.m
		}
		if bytes.EqualFold(k, []byte(m.name)) {
			s.memberCase = true
		}
	}
	return memberOther
}

// addKey records k in the object open at the current depth; it reports
// false if k was already there.
func (s *scanner) addKey(k []byte) bool {
	d := s.depth
	if set := s.sets[d]; set != nil {
		if _, dup := set[string(k)]; dup {
			return false
		}
		set[string(k)] = struct{}{}
		return true
	}
	for _, o := range s.keys[d] {
		if bytes.Equal(o, k) {
			return false
		}
	}
	s.keys[d] = append(s.keys[d], k)
	if len(s.keys[d]) > keySetThreshold {
		set := make(map[string]struct{}, 2*keySetThreshold)
		for _, o := range s.keys[d] {
			set[string(o)] = struct{}{}
		}
		s.sets[d] = set
	}
	return true
}
