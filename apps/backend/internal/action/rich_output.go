package action

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// maxRichFileBytes bounds a file block's stored preview (what rich output
// reads of a workspace file; a CSV chart's file is bounded by
// kanban.MaxCSVBytes).
const maxRichFileBytes = 64 << 10

// richBlock is one rich output block as the tool sends it, plus what the
// backend reads for it from the workspace (file content, CSV data).
type richBlock struct {
	Type string `json:"type"`
	// file
	Path      string `json:"path,omitempty"`
	Repo      string `json:"repo,omitempty"`
	Title     string `json:"title,omitempty"`
	Caption   string `json:"caption,omitempty"`
	MimeType  string `json:"mime_type,omitempty"`
	Content   string `json:"content,omitempty"`
	Size      int64  `json:"size,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	Binary    bool   `json:"binary,omitempty"`
	// chart
	ChartType string            `json:"chart_type,omitempty"`
	Summary   string            `json:"summary,omitempty"`
	Labels    []string          `json:"labels,omitempty"`
	Series    []richSeries      `json:"series,omitempty"`
	CSV       *richCSV          `json:"csv,omitempty"`
	Items     []json.RawMessage `json:"items,omitempty"` // metrics, kept as given
}

type richSeries struct {
	Label  string     `json:"label"`
	Values []*float64 `json:"values"`
}

type richCSV struct {
	Path    string `json:"path"`
	Repo    string `json:"repo,omitempty"`
	XColumn string `json:"x_column"`
	Series  []struct {
		Column string `json:"column"`
		Label  string `json:"label,omitempty"`
	} `json:"series"`
}

// expandRichOutput checks a rich output's charts and reads what its
// blocks point at in task t's workspace: a file block's content (a bounded
// preview), a CSV chart's labels and series. The stored output is
// self-contained, so the board shows it as it was when the agent sent it.
func (s *Service) expandRichOutput(ctx context.Context, t *kanban.Task, data json.RawMessage) (json.RawMessage, error) {
	var r map[string]json.RawMessage
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, kanban.FieldError("data", "must be a JSON object")
	}
	var blocks []richBlock
	if err := json.Unmarshal(r["blocks"], &blocks); err != nil {
		return nil, kanban.FieldError("blocks", "must be a list of blocks")
	}
	for i := range blocks {
		b := &blocks[i]
		field := fmt.Sprintf("blocks[%d]", i)
		var err error
		switch b.Type {
		case "file":
			err = s.readFileBlock(ctx, t, b, field)
		case "chart":
			err = s.chartData(ctx, t, b, field)
		}
		if err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(blocks)
	if err != nil {
		return nil, err
	}
	r["blocks"] = raw
	return json.Marshal(r)
}

// workspaceHead reads at most limit bytes of the workspace-relative file
// rel of task t (in its repository repo, or its main one), through the
// filesystem policy's bounded reader.
func (s *Service) workspaceHead(ctx context.Context, t *kanban.Task, repo, rel, field string, limit int64) (*fsguard.File, error) {
	root, err := s.dirs.Existing(ctx, t, repo)
	if err != nil {
		if e, ok := kanban.AsError(err); ok && e.Field == "repo" {
			return nil, kanban.FieldError(strings.TrimSuffix(field, ".path")+".repo", "%s", strings.TrimPrefix(e.Message, "repo: "))
		}
		return nil, err
	}
	return s.fs.ReadFile(ctx, root, rel, field, limit)
}

func (s *Service) readFileBlock(ctx context.Context, t *kanban.Task, b *richBlock, field string) error {
	f, err := s.workspaceHead(ctx, t, b.Repo, b.Path, field+".path", maxRichFileBytes)
	if err != nil {
		return err
	}
	head := f.Head
	b.Size, b.Truncated = f.Size, f.Size > int64(len(head))
	if b.MimeType == "" {
		b.MimeType = mime.TypeByExtension(filepath.Ext(b.Path))
		if b.MimeType == "" {
			b.MimeType = http.DetectContentType(head)
		}
	}
	text := head
	if b.Truncated { // the cut may split the last character
		for cut := 0; cut < utf8.UTFMax && len(text) > 0 && !utf8.Valid(text); cut++ {
			text = text[:len(text)-1]
		}
	}
	if bytes.IndexByte(text, 0) >= 0 || !utf8.Valid(text) {
		b.Binary = true // shown as a file reference, not as text
		return nil
	}
	b.Content = string(text)
	return nil
}

// chartData checks a chart's data: inline (one value per label) or from a
// CSV file of the workspace, which it reads into labels and series.
func (s *Service) chartData(ctx context.Context, t *kanban.Task, b *richBlock, field string) error {
	inline := len(b.Labels) > 0 || len(b.Series) > 0
	switch {
	case inline && b.CSV != nil:
		return kanban.FieldError(field, "give labels and series, or csv, not both")
	case b.CSV == nil && (len(b.Labels) == 0 || len(b.Series) == 0):
		return kanban.FieldError(field, "needs labels and series, or csv")
	case b.CSV != nil:
		return s.csvChart(ctx, t, b, field+".csv")
	}
	for j, sr := range b.Series {
		if len(sr.Values) != len(b.Labels) {
			return kanban.FieldError(fmt.Sprintf("%s.series[%d].values", field, j), "must have one value per label")
		}
	}
	return nil
}

func (s *Service) csvChart(ctx context.Context, t *kanban.Task, b *richBlock, field string) error {
	c := b.CSV
	if !strings.EqualFold(filepath.Ext(c.Path), ".csv") {
		return kanban.FieldError(field+".path", "must name a .csv file")
	}
	f, err := s.workspaceHead(ctx, t, c.Repo, c.Path, field+".path", kanban.MaxCSVBytes)
	if err != nil {
		return err
	}
	head := f.Head
	if f.Size > kanban.MaxCSVBytes {
		return kanban.FieldError(field+".path", "is larger than %d KiB", kanban.MaxCSVBytes>>10)
	}
	rows, err := csv.NewReader(bytes.NewReader(head)).ReadAll()
	if err != nil || len(rows) <= 1 { // a header row and at least one data row
		return kanban.FieldError(field+".path", "must be a CSV file with a header row and at least one data row")
	}
	if len(rows)-1 > kanban.MaxChartLabels {
		return kanban.FieldError(field+".path", "has more than %d data rows", kanban.MaxChartLabels)
	}
	col := func(name string) int {
		for i, h := range rows[0] {
			if strings.TrimSpace(h) == name {
				return i
			}
		}
		return -1
	}
	x := col(c.XColumn)
	if x < 0 {
		return kanban.FieldError(field+".x_column", "is not a column of the CSV header")
	}
	b.Labels = make([]string, 0, len(rows)-1)
	for _, row := range rows[1:] {
		b.Labels = append(b.Labels, kanban.Clip(cell(row, x), kanban.MaxChartLabelLen))
	}
	b.Series = nil
	for j, m := range c.Series {
		k := col(m.Column)
		if k < 0 {
			return kanban.FieldError(fmt.Sprintf("%s.series[%d].column", field, j), "is not a column of the CSV header")
		}
		sr := richSeries{Label: m.Label, Values: make([]*float64, 0, len(rows)-1)}
		if sr.Label == "" {
			sr.Label = m.Column
		}
		for r, row := range rows[1:] {
			v, err := number(cell(row, k))
			if err != nil {
				return kanban.FieldError(fmt.Sprintf("%s.series[%d]", field, j), "row %d of column %s is not a number", r+1, m.Column)
			}
			sr.Values = append(sr.Values, v)
		}
		b.Series = append(b.Series, sr)
	}
	return nil
}

func cell(row []string, i int) string {
	if i < len(row) {
		return strings.TrimSpace(row[i])
	}
	return ""
}

// number parses a CSV cell: empty is a gap (null).
func number(v string) (*float64, error) {
	if v == "" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f != f { // NaN is no value to chart
		return nil, errors.New("not a number")
	}
	return &f, nil
}
