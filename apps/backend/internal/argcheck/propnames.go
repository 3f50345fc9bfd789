package argcheck

import "strconv"

// propertyNames reports every object at the given depth of the arguments
// that has a key its propertyNames subschema refuses. The validator's own
// location for such failures is unreliable (it shares the path slice), but
// its depth is right, so the objects at that depth are checked again with
// the compiled propertyNames subschemas. The key itself is never reported.
func (c *collector) propertyNames(depth int) {
	if c.pnDepth[depth] {
		return
	}
	if c.pnDepth == nil {
		c.pnDepth = map[int]bool{}
	}
	c.pnDepth[depth] = true
	found := false
	var visit func(inst any, l *locus, path string, d int)
	visit = func(inst any, l *locus, path string, d int) {
		switch x := inst.(type) {
		case map[string]any:
			if d == depth {
				if c.badKey(x, l.nodes) {
					found = true
					c.list = append(c.list, Problem{Path: path, Text: path + ": a key does not satisfy propertyNames"})
				}
				return
			}
			for k := range x {
				p, next, v := c.step(path, l, x, k)
				visit(v, next, p, d+1)
			}
		case []any:
			if d == depth {
				return
			}
			for i := range x {
				p, next, v := c.step(path, l, x, strconv.Itoa(i))
				visit(v, next, p, d+1)
			}
		}
	}
	visit(c.args, c.tree.top, "/", 0)
	if !found {
		c.list = append(c.list, Problem{Path: "/", Text: "/: a key does not satisfy propertyNames"})
	}
}

// badKey reports whether a propertyNames subschema among nodes refuses one
// of obj's keys.
func (c *collector) badKey(obj map[string]any, nodes []any) bool {
	for _, n := range nodes {
		s := c.tree.pnSchema[nodeID(n)]
		if s == nil {
			continue
		}
		for key := range obj {
			if s.Validate(key) != nil {
				return true
			}
		}
	}
	return false
}
