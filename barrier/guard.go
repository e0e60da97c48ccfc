package barrier

import "fmt"

// Guard runs one guard input from bytes to answer: parse, plan with the rules, and only for an
// effect (or a report about one) open the ledger and decide. It is what `agent-rewind guard`
// runs; the CLI supplies the rules and the ways to open what the effect path needs.
type Guard struct {
	// Rules classify calls. Nil means DefaultRules(); the CLI passes what LoadRules returns for
	// the workspace root, and its error in RulesErr.
	Rules *Rules
	// RulesErr, when set, is the error loading the rules: every deciding input is then refused
	// with it (fail closed), and reports are still handled.
	RulesErr error
	// OpenLedger opens the ledger (with its Recorder). It is called only when the input needs
	// the ledger, never for a call that is not an effect.
	OpenLedger func() (*Ledger, error)
	// Checkpoint returns the id of the checkpoint that is current, for admission records. It is
	// called only for admissions; nil means none is known.
	Checkpoint func() (string, error)
}

// Outcome is everything one guard run produced.
type Outcome struct {
	Input    Input    `json:"input"`
	Action   Action   `json:"action"`
	Decision Decision `json:"decision"`
	Err      error    `json:"-"`
	Answer   Answer   `json:"answer"`
}

// Handle runs one guard input. It never panics on bad input; everything that went wrong is in
// Outcome.Err and already reflected in Outcome.Answer.
func (g *Guard) Handle(raw []byte) Outcome {
	in, err := ParseHookInput(raw)
	if err != nil && in.Event == "" {
		in.Event = EventOf(raw)
	}
	return g.Run(in, err)
}

// Run decides an input already parsed by ParseHookInput; parseErr is its error (in then holds
// only the client and the event ParseHookInput could tell, or the Event that EventOf could
// read). The CLI parses first to find the workspace the input names, then runs.
func (g *Guard) Run(in Input, parseErr error) Outcome {
	o := Outcome{Input: in, Err: parseErr}
	if parseErr != nil {
		o.Answer = Respond(o.Input, Decision{}, parseErr)
		return o
	}
	o.Action, o.Decision, o.Err = g.decide(o.Input)
	o.Answer = Respond(o.Input, o.Decision, o.Err)
	return o
}

func (g *Guard) decide(in Input) (Action, Decision, error) {
	rules := g.Rules
	if rules == nil {
		rules = DefaultRules()
	}
	if g.RulesErr != nil && in.Deciding() && in.Agent != AgentExplicit {
		return Action{}, Decision{}, g.RulesErr
	}
	a, err := rules.Plan(in)
	if err != nil {
		return a, Decision{}, err
	}
	if a.Kind == ActNone {
		return a, Decision{Admitted: true, Code: a.Code}, nil
	}
	if g.OpenLedger == nil {
		return a, Decision{}, fmt.Errorf("barrier: Guard has no OpenLedger")
	}
	l, err := g.OpenLedger()
	if err != nil {
		return a, Decision{}, err
	}
	if a.Kind == ActAdmit && g.Checkpoint != nil {
		cp, err := g.Checkpoint()
		if err != nil {
			return a, Decision{}, fmt.Errorf("find the current checkpoint: %w", err)
		}
		a.Request.Checkpoint = cp
	}
	d, err := l.Apply(a)
	return a, d, err
}

// Apply carries out an action planned by Rules.Plan. ActNone decides nothing and returns the
// zero Decision.
func (l *Ledger) Apply(a Action) (Decision, error) {
	switch a.Kind {
	case ActAdmit:
		return l.Admit(a.Request)
	case ActConfirm:
		return l.Confirm(a.ToolUseID, a.By)
	case ActFail:
		return l.Fail(a.ToolUseID, a.Reason, a.Interrupt, a.By)
	case ActRelease:
		return l.ReleaseToolUse(a.ToolUseID, a.Reason, a.By)
	case ActNone:
		return Decision{}, nil
	}
	return Decision{}, fmt.Errorf("barrier: unknown action %q", a.Kind)
}
