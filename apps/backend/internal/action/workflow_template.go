package action

import (
	"context"
	"embed"
	"fmt"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// The built-in workflow templates: portable workflow documents embedded in
// the binary, one workflow each, in the gallery's order. A template's id
// is its file's name without ".yaml". workflow.template.list lists them;
// workflow.import with template_id instantiates one (the same import as a
// document's, so a template can do nothing a document cannot); Seed
// creates the first, Kanban, on a new installation.
var (
	//go:embed templates/*.yaml
	templateFS embed.FS

	// TemplateIDs are the templates in gallery order (a test keeps this
	// list and the embedded files the same).
	TemplateIDs = []string{"kanban", "plan-and-build", "feature-dev", "pr-review", "architecture", "routine", "office-default"}
)

// DefaultTemplateID is the template a new installation's board is made of.
const DefaultTemplateID = "kanban"

// WorkflowTemplate is one built-in template, as workflow.template.list
// returns it: its document is what workflow.import creates from it.
type WorkflowTemplate struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Document    *WorkflowDocument `json:"document"`
}

// TemplateListIn is the payload of workflow.template.list.
type TemplateListIn = ListIn

// templateText returns the embedded document of template id (NOT_FOUND
// for an id that is not a template).
func templateText(id string) (string, error) {
	if !slices.Contains(TemplateIDs, id) {
		return "", kanban.Errorf(kanban.CodeNotFound, "no built-in workflow template %q; workflow.template.list lists them", id)
	}
	b, err := templateFS.ReadFile("templates/" + id + ".yaml")
	if err != nil {
		return "", fmt.Errorf("read template %s: %w", id, err)
	}
	return string(b), nil
}

// Template returns the built-in template id, its document checked as an
// import checks it.
func Template(id string) (*WorkflowTemplate, error) {
	text, err := templateText(id)
	if err != nil {
		return nil, err
	}
	doc, _, err := parseWorkflowDocument(text)
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", id, err)
	}
	if len(doc.Workflows) != 1 {
		return nil, fmt.Errorf("template %s: holds %d workflows, want 1", id, len(doc.Workflows))
	}
	return &WorkflowTemplate{ID: id, Name: doc.Workflows[0].Name, Description: doc.Workflows[0].Description, Document: doc}, nil
}

// DefaultWorkflow returns the workflow and steps of the default template,
// as Seed takes them: steps in board order, referring to each other by
// position, as an imported document's do.
func DefaultWorkflow() (kanban.Workflow, []kanban.WorkflowStep, error) {
	text, err := templateText(DefaultTemplateID)
	if err != nil {
		return kanban.Workflow{}, nil, err
	}
	_, parsed, err := parseWorkflowDocument(text)
	if err != nil {
		return kanban.Workflow{}, nil, fmt.Errorf("template %s: %w", DefaultTemplateID, err)
	}
	return parsed[0].workflow, parsed[0].steps, nil
}

// Seeder is what Seed seeds: a store.
type Seeder interface {
	Seed(ctx context.Context, w kanban.Workflow, steps []kanban.WorkflowStep) error
}

// Seed seeds a new installation's store (kanban.Store.Seed) with the
// default template's workflow; on a seeded one it writes nothing.
func Seed(ctx context.Context, st Seeder) error {
	w, steps, err := DefaultWorkflow()
	if err != nil {
		return err
	}
	return st.Seed(ctx, w, steps)
}

// listTemplates returns a page of the templates in gallery order; the
// cursor is the id of the previous page's last template.
func listTemplates(in TemplateListIn) (*kanban.List[WorkflowTemplate], error) {
	pg, err := in.page().Normalize()
	if err != nil {
		return nil, err
	}
	from := 0
	if pg.Cursor != "" {
		i := slices.Index(TemplateIDs, pg.Cursor)
		if i < 0 {
			return nil, kanban.FieldError("cursor", "is not a valid cursor")
		}
		from = i + 1
	}
	ids := TemplateIDs[from:]
	out := &kanban.List[WorkflowTemplate]{Items: []WorkflowTemplate{}}
	if len(ids) > pg.Limit {
		ids = ids[:pg.Limit]
		out.NextCursor = ids[len(ids)-1]
	}
	for _, id := range ids {
		t, err := Template(id)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *t)
	}
	return out, nil
}

// importText returns the document text workflow.import works on: the
// payload's document or a template's.
func importText(in WorkflowImportIn) (string, error) {
	switch {
	case in.Document != "" && in.TemplateID != "":
		return "", kanban.FieldError("template_id", "give a document or a template_id, not both")
	case in.TemplateID != "":
		return templateText(in.TemplateID)
	case in.Document == "":
		return "", kanban.FieldError("document", "is required: give the workflow document as YAML or JSON text, or a template_id")
	}
	return in.Document, nil
}

// rename gives the only workflow of a parsed document the payload's name.
func rename(name string, doc *WorkflowDocument, parsed []parsedWorkflow) error {
	if name == "" {
		return nil
	}
	if len(parsed) != 1 {
		return kanban.FieldError("name", "renames the workflow of a document that holds one; this one holds %d", len(parsed))
	}
	if err := kanban.CheckLine("name", name, true, kanban.MaxNameLen); err != nil {
		return err
	}
	doc.Workflows[0].Name, parsed[0].workflow.Name = name, name
	return nil
}

var _ = declare(Def[TemplateListIn, *kanban.List[WorkflowTemplate]]{
	Name:   kanban.ActionWorkflowTemplateList,
	Effect: Reads,
	Allow:  cfg,
	Schema: schema.Obj("", pageProps(schema.P{})),
	Run: func(_ *Service, _ context.Context, _ Principal, in TemplateListIn) (*kanban.List[WorkflowTemplate], error) {
		return listTemplates(in)
	},
})
