package agents

import (
	"fmt"
	"sync"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// Trees remembers the project's files around every tool call the model made: read when the
// model's turn that made the call is answered (the files before the call: the client has not
// run it yet) and when the client first reports its result (the files after it). Rewinding to
// "before call X" must give back exactly Before(X).
type Trees struct {
	dir    string
	mu     sync.Mutex
	before map[string]Tree
	after  map[string]Tree
	err    error
}

// Record wraps script so that every request reads the tree under dir, and returns the record.
func Record(dir string, script mockmodel.Script) (*Trees, mockmodel.Script) {
	tr := &Trees{dir: dir, before: map[string]Tree{}, after: map[string]Tree{}}
	return tr, func(c *mockmodel.Conversation) mockmodel.Turn {
		now, err := ReadTree(dir)
		tr.mu.Lock()
		if err != nil && tr.err == nil {
			tr.err = fmt.Errorf("read the tree under %s: %w", dir, err)
		}
		for _, r := range c.Results() {
			if _, ok := tr.after[r.CallID]; !ok {
				tr.after[r.CallID] = now
			}
		}
		tr.mu.Unlock()
		turn := script(c)
		tr.mu.Lock()
		for _, call := range turn.ToolCalls {
			tr.before[call.ID] = now
		}
		tr.mu.Unlock()
		return turn
	}
}

// Before returns the tree before the call with that id.
func (tr *Trees) Before(id string) (Tree, error) { return tr.get(tr.before, id, "before") }

// After returns the tree when the call's result was first reported.
func (tr *Trees) After(id string) (Tree, error) { return tr.get(tr.after, id, "after") }

func (tr *Trees) get(m map[string]Tree, id, when string) (Tree, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.err != nil {
		return nil, tr.err
	}
	t, ok := m[id]
	if !ok {
		return nil, fmt.Errorf("no tree recorded %s call %s: the model made no such call, or its result never came back", when, id)
	}
	return t, nil
}
