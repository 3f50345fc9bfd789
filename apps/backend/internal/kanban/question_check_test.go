package kanban

import "testing"

func TestPrepareQuestions(t *testing.T) {
	opts := func(labels ...string) []QuestionOption {
		out := make([]QuestionOption, len(labels))
		for i, l := range labels {
			out[i] = QuestionOption{Label: l, Description: "d"}
		}
		return out
	}
	in := []QuestionItem{{Prompt: "a", Options: opts("A", "B")}, {ID: "db", Prompt: "b", Options: opts("X", "Y")}}
	got, err := PrepareQuestions(in)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].ID != "q1" || got[1].ID != "db" || got[0].Options[1].OptionID != "q1_opt2" || got[1].Options[0].OptionID != "q2_opt1" {
		t.Errorf("defaults: got %+v", got)
	}
	if in[0].ID != "" || in[0].Options[0].OptionID != "" {
		t.Errorf("the caller's items changed: %+v", in)
	}
	for name, tc := range map[string]struct {
		items []QuestionItem
		field string
	}{
		"an explicit id repeats a default": {[]QuestionItem{{ID: "q2", Prompt: "a", Options: opts("A", "B")}, {Prompt: "b", Options: opts("A", "B")}}, "questions[1].id"},
		"labels repeat":                    {[]QuestionItem{{Prompt: "a", Options: opts("A", "A")}}, "questions[0].options[1].label"},
		"option ids repeat": {[]QuestionItem{{Prompt: "a", Options: []QuestionOption{{OptionID: "x", Label: "A"},
			{OptionID: "x", Label: "B"}}}}, "questions[0].options[1].option_id"},
	} {
		_, err := PrepareQuestions(tc.items)
		if e, ok := AsError(err); !ok || e.Field != tc.field {
			t.Errorf("%s: got %v, want a VALIDATION_ERROR on %s", name, err, tc.field)
		}
	}
}
