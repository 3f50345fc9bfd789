package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// Secrets stores the named secrets (package vault's Secrets): values go
// in sealed and never come back out through an action.
type Secrets interface {
	Set(ctx context.Context, name, value string) (*kanban.SecretInfo, error)
	List(ctx context.Context, p kanban.Page) (*kanban.List[kanban.SecretInfo], error)
	Delete(ctx context.Context, name string) error
}

// SecretSetIn is the payload of secret.set.
type SecretSetIn struct {
	Name  string `json:"name,omitzero"`
	Value string `json:"value,omitzero"`
}

// SecretNameIn is the payload of secret.delete.
type SecretNameIn struct {
	Name string `json:"name,omitzero"`
}

// SecretDeleted is the result of secret.delete.
type SecretDeleted struct {
	Name    string `json:"name"`
	Deleted bool   `json:"deleted"`
}

func secretNameProp() schema.S {
	return schema.Str(`The secret's name; refer to it as "secret:<name>".`).Pattern(kanban.SecretNamePattern)
}

// secrets is the configured store of secrets, or UNAVAILABLE.
func (s *Service) secretStore() (Secrets, error) {
	if s.secrets == nil {
		return nil, kanban.Errorf(kanban.CodeUnavailable, "this backend has no secrets key configured")
	}
	return s.secrets, nil
}

var _ = declare(Def[SecretSetIn, *kanban.SecretInfo]{
	Name:   kanban.ActionSecretSet,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"name":  secretNameProp(),
		"value": schema.Str("The value, stored encrypted; never returned by any action.").Len(1, kanban.MaxNamedSecretLen),
	}, "name", "value"),
	Run: func(s *Service, ctx context.Context, _ Principal, in SecretSetIn) (*kanban.SecretInfo, error) {
		st, err := s.secretStore()
		if err != nil {
			return nil, err
		}
		return st.Set(ctx, in.Name, in.Value)
	},
})

var _ = declare(Def[ListIn, *kanban.List[kanban.SecretInfo]]{
	Name:   kanban.ActionSecretList,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{})),
	Run: func(s *Service, ctx context.Context, _ Principal, in ListIn) (*kanban.List[kanban.SecretInfo], error) {
		st, err := s.secretStore()
		if err != nil {
			return nil, err
		}
		return st.List(ctx, in.page())
	},
})

var _ = declare(Def[SecretNameIn, *SecretDeleted]{
	Name:   kanban.ActionSecretDelete,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{"name": secretNameProp()}, "name"),
	Run: func(s *Service, ctx context.Context, _ Principal, in SecretNameIn) (*SecretDeleted, error) {
		st, err := s.secretStore()
		if err != nil {
			return nil, err
		}
		if err := st.Delete(ctx, in.Name); err != nil {
			return nil, err
		}
		return &SecretDeleted{Name: in.Name, Deleted: true}, nil
	},
})
