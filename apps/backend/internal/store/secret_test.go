package store

import (
	"context"
	"errors"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestSecretsStoreAndRekey(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		s := newTestStore(t)
		ctx := context.Background()
		for _, n := range []string{"B", "A", "C"} {
			if _, err := s.PutSecret(ctx, kanban.SealedSecret{Name: n, KeyID: "k1", Sealed: "sealed-" + n, Size: 5}); err != nil {
				t.Fatal(err)
			}
		}
		info, err := s.PutSecret(ctx, kanban.SealedSecret{Name: "A", KeyID: "k1", Sealed: "sealed-A2", Size: 7})
		if err != nil || info.Size != 7 || info.Masked != kanban.SecretMask || !info.UpdatedAt.After(info.CreatedAt) && !info.UpdatedAt.Equal(info.CreatedAt) {
			t.Fatalf("replace: got %+v, %v", info, err)
		}
		page, err := s.ListSecrets(ctx, kanban.Page{Limit: 2})
		if err != nil || len(page.Items) != 2 || page.Items[0].Name != "A" || page.NextCursor == "" {
			t.Fatalf("list: got %+v, %v, want A, B and a cursor", page, err)
		}
		// A failing reseal leaves every row as it was.
		boom := errors.New("boom")
		if _, err := s.RekeySecrets(ctx, func(sec kanban.SealedSecret) (kanban.SealedSecret, error) {
			if sec.Name == "C" {
				return sec, boom
			}
			sec.KeyID, sec.Sealed = "k2", "new-"+sec.Name
			return sec, nil
		}); !errors.Is(err, boom) {
			t.Fatalf("failing rekey: got %v, want boom", err)
		}
		if got, err := s.GetSecret(ctx, "A"); err != nil || got.Sealed != "sealed-A2" || got.KeyID != "k1" {
			t.Fatalf("after a failed rekey: got %+v, %v, want A unchanged", got, err)
		}
		n, err := s.RekeySecrets(ctx, func(sec kanban.SealedSecret) (kanban.SealedSecret, error) {
			sec.KeyID, sec.Sealed = "k2", "new-"+sec.Name
			return sec, nil
		})
		if err != nil || n != 3 {
			t.Fatalf("rekey: got %d, %v, want 3", n, err)
		}
		ids, err := s.SecretKeyIDs(ctx)
		if err != nil || len(ids) != 1 || ids[0] != "k2" {
			t.Errorf("key ids: got %v, %v, want [k2]", ids, err)
		}
		if got, err := s.GetSecret(ctx, "A"); err != nil || got.Sealed != "new-A" {
			t.Errorf("get: got %+v, %v", got, err)
		}
		if err := s.DeleteSecret(ctx, "A"); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeleteSecret(ctx, "A"), kanban.CodeNotFound)
		_, err = s.GetSecret(ctx, "A")
		wantCode(t, err, kanban.CodeNotFound)
	})
}
