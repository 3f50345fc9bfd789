package app

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestWebSocketDocsListEveryEvent: the WebSocket page's list of events is
// exactly the events the backend declares (kanban.EventNames), so a new
// event cannot go undocumented nor a removed one stay listed.
func TestWebSocketDocsListEveryEvent(t *testing.T) {
	page, err := os.ReadFile("../../../../docs/public/websocket-api.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(page), "\nEvents: ")
	if !ok {
		t.Fatal(`no "Events:" list on the WebSocket page`)
	}
	list, _, _ := strings.Cut(after, "\n\n")
	var documented []string
	for _, m := range regexp.MustCompile("`([a-z_]+\\.[a-z_]+)`").FindAllStringSubmatch(list, -1) {
		documented = append(documented, m[1])
	}
	slices.Sort(documented)
	if want := kanban.EventNames(); !slices.Equal(documented, want) {
		t.Fatalf("the page lists %v, want the declared events %v", documented, want)
	}
}
