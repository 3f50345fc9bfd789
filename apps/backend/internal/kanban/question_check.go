package kanban

import (
	"fmt"
	"slices"
)

// PrepareQuestions returns a copy of a bundle's questions with the default
// ids filled in — "q<n>" by position, "q<n>_opt<m>" for options — after
// checking the rules a JSON Schema cannot state: the questions' ids, and
// within a question its options' ids and labels, are distinct. Shapes,
// counts, patterns and lengths are the contract's (question.ask and
// question.ask_parent); items is not modified.
func PrepareQuestions(items []QuestionItem) ([]QuestionItem, error) {
	out := slices.Clone(items)
	for i := range out {
		it := &out[i]
		it.Options = slices.Clone(it.Options)
		if it.ID == "" {
			it.ID = fmt.Sprintf("q%d", i+1)
		}
	}
	for i, it := range out {
		path := fmt.Sprintf("questions[%d]", i)
		if slices.ContainsFunc(out[:i], func(o QuestionItem) bool { return o.ID == it.ID }) {
			return nil, FieldError(path+".id", "duplicates another question's id")
		}
		if err := prepareOptions(path+".options", i, it.Options); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func prepareOptions(path string, qi int, opts []QuestionOption) error {
	for j := range opts {
		if opts[j].OptionID == "" {
			opts[j].OptionID = fmt.Sprintf("q%d_opt%d", qi+1, j+1)
		}
	}
	for j, o := range opts {
		p := fmt.Sprintf("%s[%d]", path, j)
		if slices.ContainsFunc(opts[:j], func(x QuestionOption) bool { return x.OptionID == o.OptionID }) {
			return FieldError(p+".option_id", "duplicates another option's id")
		}
		if slices.ContainsFunc(opts[:j], func(x QuestionOption) bool { return x.Label == o.Label }) {
			return FieldError(p+".label", "duplicates another option's label")
		}
	}
	return nil
}
