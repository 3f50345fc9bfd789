package board

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestAssets(t *testing.T) {
	b, err := New(Config{Operator: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	body, err := staticFS.ReadFile("static/app/main.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	found := false
	for _, a := range b.Assets() {
		if a.Path == "/app/main.js" {
			found = a.Bytes == len(body) && a.SHA256 == hex.EncodeToString(sum[:12]) && a.GzipBytes > 0 && a.GzipBytes < a.Bytes
		}
	}
	if got := b.Assets(); !found || got[0].Path != "/ (index.html)" || len(got) != len(b.assets)+1 {
		t.Fatalf("got %+v, want every asset plus the page, sorted, with main.js's size, gzip size and hash", got)
	}
}
