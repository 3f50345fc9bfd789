package board

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
)

// Asset describes one file the board serves, for a diagnostic bundle.
type Asset struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
	// GzipBytes is the size served to browsers that accept gzip (0: the
	// file is served uncompressed).
	GzipBytes int `json:"gzip_bytes,omitempty"`
	// SHA256 is the first 24 hex digits of the SHA-256 of the file.
	SHA256 string `json:"sha256"`
}

// Assets lists the pages and files the board serves, sorted by path.
func (b *Board) Assets() []Asset {
	out := make([]Asset, 0, len(b.assets)+1)
	out = append(out, describe("/ (index.html)", b.index, nil))
	for p, a := range b.assets {
		out = append(out, describe(p, a.body, a.gz))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func describe(path string, body, gz []byte) Asset {
	sum := sha256.Sum256(body)
	return Asset{Path: path, Bytes: len(body), GzipBytes: len(gz), SHA256: hex.EncodeToString(sum[:12])}
}
