package schemabudget

import "fmt"

// expand counts, from the root, the subschema evaluations of a full
// expansion with every reference followed, and the references on the
// longest path. Each node is expanded once (its totals memoised), so the
// work is linear in the document even when the count is exponential; counts
// saturate just past their limits. The walk keeps its own stack (no
// recursion), and that stack is bounded: structural steps by the document
// depth, reference steps by lim.RefHops.
func (c *checker) expand() *Refusal {
	type frame struct {
		n     *node
		edges []edge
		i     int
		hops  int // references followed from the root to n on this path
	}
	if r := c.enter(c.root); r != nil {
		return r
	}
	stack := []frame{{n: c.root, edges: c.d.edges(c.root, nil)}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.i == len(top.edges) {
			n := top.n
			n.color = 2
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				parent := &stack[len(stack)-1]
				if r := c.add(parent.n, parent.edges[parent.i-1], parent.hops); r != nil {
					return r
				}
			}
			continue
		}
		e := top.edges[top.i]
		top.i++
		c.est.Work++
		hops := top.hops
		if e.ref {
			hops++
		}
		switch e.to.color {
		case 1:
			return &Refusal{Limit: LimitRefCycle, Detail: "references form a cycle (recursive schemas are not supported)", At: pathOf(e.to.path())}
		case 2:
			if r := c.add(top.n, e, top.hops); r != nil {
				return r
			}
			continue
		}
		if hops > c.lim.RefHops {
			return c.hopsRefusal(e.to)
		}
		if r := c.enter(e.to); r != nil {
			return r
		}
		var edges []edge
		if e.to.kind == kObject {
			edges = c.d.edges(e.to, nil)
		}
		stack = append(stack, frame{n: e.to, edges: edges, hops: hops})
	}
	c.est.Visits, c.est.RefHops = c.root.visits, c.root.hops
	return nil
}

// enter starts expanding n: it is on the stack and counts itself.
func (c *checker) enter(n *node) *Refusal {
	n.color, n.visits = 1, 1
	if n.kind == kObject {
		return c.inspect(n, false)
	}
	return nil
}

// add folds a finished child into parent's totals and checks the limits.
func (c *checker) add(parent *node, e edge, pathHops int) *Refusal {
	hops := e.to.hops
	if e.ref {
		hops++
	}
	if pathHops+hops > c.lim.RefHops {
		return c.hopsRefusal(e.to)
	}
	parent.hops = max(parent.hops, hops)
	parent.visits = min(parent.visits+e.to.visits, c.lim.Visits+1)
	if parent.visits > c.lim.Visits {
		c.est.Visits = parent.visits
		return &Refusal{Limit: LimitVisits, Detail: fmt.Sprintf("expanding the schema evaluates more than %d subschemas", c.lim.Visits), At: pathOf(parent.path())}
	}
	return nil
}

func (c *checker) hopsRefusal(n *node) *Refusal {
	c.est.RefHops = c.lim.RefHops + 1
	return &Refusal{Limit: LimitRefHops, Detail: fmt.Sprintf("a path through the schema follows more than %d references", c.lim.RefHops), At: pathOf(n.path())}
}
