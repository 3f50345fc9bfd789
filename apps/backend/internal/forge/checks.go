package forge

// finish ends a read of a commit's checks, the same on every forge: when
// a page answered 304 without a body (a seeded conditional request), an
// all-304 read is NotModified and any other is read again without seeds
// (again); else the counts give the combined state.
func (c *Checks) finish(anyBodiless bool, again func() (*Checks, error)) (*Checks, error) {
	switch {
	case c.NotModified && anyBodiless:
		return &Checks{SHA: c.SHA, NotModified: true}, nil
	case anyBodiless:
		return again()
	}
	c.State = c.combined()
	return c, nil
}

// combined is the checks' state: any failure is failing, else anything
// unfinished pending, else passing; none without checks.
func (c *Checks) combined() CheckState {
	switch {
	case c.Failed > 0:
		return ChecksFailing
	case c.Pending > 0:
		return ChecksPending
	case c.Total > 0:
		return ChecksPassing
	}
	return ChecksNone
}
