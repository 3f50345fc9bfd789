package forgetest

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// etagged sets the ETag of an answer's body (weak, W/"…", as GitLab's;
// strong as GitHub's) and reports whether the request is a GET of a 200
// whose If-None-Match names it (a list, weak or strong: the comparison
// is weak, RFC 9110's for If-None-Match): the caller then answers 304
// without a body. The GitHub and GitLab fixtures share it.
func etagged(w http.ResponseWriter, r *http.Request, status int, body []byte, weak bool) bool {
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	if weak {
		etag = "W/" + etag
	}
	w.Header().Set("ETag", etag)
	if r.Method != http.MethodGet || status != http.StatusOK {
		return false
	}
	for _, tag := range strings.Split(r.Header.Get("If-None-Match"), ",") {
		if tag = strings.TrimSpace(tag); tag != "" && strings.TrimPrefix(tag, "W/") == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}
