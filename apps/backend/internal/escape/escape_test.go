package escape

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestExcerpt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"plain_name", 64, "plain_name"},
		{"a\x1b[31mred", 64, `a\x1b[31mred`},
		{"tab\there", 64, `tab\x09here`},
		{"rtl\u202eevil", 64, `rtl\u202eevil`},
		{"bad\xffbyte", 64, `bad\xffbyte`},
		{"héllo wörld", 64, "héllo wörld"},
		{strings.Repeat("x", 100), 10, "xxxxxxx..."},
		{strings.Repeat("\x00", 10), 12, `\x00\x00...`},
		{"exactly10!", 10, "exactly10!"},
	}
	for _, c := range cases {
		got := Excerpt(c.in, c.max)
		if got != c.want {
			t.Errorf("Excerpt(%q, %d): got %q, want %q", c.in, c.max, got, c.want)
		}
		if len(got) > c.max {
			t.Errorf("Excerpt(%q, %d): %d bytes, over the budget", c.in, c.max, len(got))
		}
		if !utf8.ValidString(got) || Needed(got) {
			t.Errorf("Excerpt(%q, %d) = %q still needs escaping", c.in, c.max, got)
		}
	}
}

func TestExcerptHugeHostileName(t *testing.T) {
	t.Parallel()
	name := strings.Repeat("\x07\u2066名", 40_000) // ~200 KB of bells, isolates and CJK
	got := Excerpt(name, 120)
	if len(got) > 120 || Needed(got) || !strings.HasSuffix(got, "...") {
		t.Fatalf("got %q (%d bytes), want an escaped excerpt of at most 120 bytes ending in ...", got, len(got))
	}
}

func FuzzExcerpt(f *testing.F) {
	f.Add("name\x00\u202e\xff", 32)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 4096 {
			return
		}
		got := Excerpt(s, max)
		if len(got) > maxOf(max, 4) || Needed(got) || !utf8.ValidString(got) {
			t.Fatalf("Excerpt(%q, %d) = %q", s, max, got)
		}
	})
}

// neededByRune is Needed without the word-at-a-time prefix.
func neededByRune(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// TestNeededEveryByteEveryPosition puts each byte value at each position
// of printable text (across word boundaries) and compares Needed with the
// rune-by-rune definition.
func TestNeededEveryByteEveryPosition(t *testing.T) {
	base := strings.Repeat("abcdefgh ~!", 3) // 33 printable bytes
	for c := range 256 {
		for pos := range len(base) {
			s := base[:pos] + string([]byte{byte(c)}) + base[pos+1:]
			if got, want := Needed(s), neededByRune(s); got != want {
				t.Fatalf("byte %#x at %d: got %v, want %v", c, pos, got, want)
			}
		}
	}
	for _, s := range []string{"", "a", "plain text of some length", "tab\there", "ok é ok", "bidi \u202e!", "zero\x00width", "del\x7f"} {
		if got, want := Needed(s), neededByRune(s); got != want {
			t.Errorf("%q: got %v, want %v", s, got, want)
		}
	}
}
