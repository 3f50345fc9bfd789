package packaging

import (
	"os"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/dockertest"
)

// TestMain stops the private Docker daemon the image test may start.
func TestMain(m *testing.M) {
	code := m.Run()
	dockertest.Close()
	os.Exit(code)
}
