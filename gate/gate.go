package gate

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// Ledger is the evidence the warrant layer judges: the latest stored
// snapshot of a proposition. A ledger keeps a snapshot immutable under its
// (proposition_id, view_id), which lets the gate cache its hash.
type Ledger interface {
	// Latest is the latest snapshot of pid; a refusal (a *warrant.Error,
	// EWP_REFUSE_MISSING_VIEW) when none is stored.
	Latest(ctx context.Context, pid string) (*warrant.View, error)
}

// HashedLedger is a Ledger that keeps the sha256 of each snapshot's
// canonical form and reads it with the snapshot, so a recorded decision
// names its view without canonicalising it again. A hash of "" means the
// gate computes it (and caches it).
type HashedLedger interface {
	Ledger
	LatestHashed(ctx context.Context, pid string) (v *warrant.View, canonicalSHA256 string, err error)
}

// Config configures New.
type Config struct {
	// Ledger is the evidence; nil refuses every call that names a
	// proposition.
	Ledger Ledger
	// Log is the decision log; nil: nothing is recorded, and a request
	// presenting an approval or an idempotency key is refused.
	Log audit.Log
	// Layers are the layers past the warrant layer (grounding,
	// edge_policies, call_policies, budget, …), in order. The evidence
	// layer (EvidenceLayer) runs first for a Request with Call unless it
	// is among them; it judges only such requests.
	Layers []Layer
	// Approvals is the approval layer; nil with a Log: one over the Log
	// with OperatorKeys and MaxApprovalLifetime.
	Approvals *Approvals
	// OperatorKeys are the keys whose signatures make an approval count.
	OperatorKeys *audit.OperatorKeys
	// MaxApprovalLifetime caps an approval (audit.Approval.Capped); 0:
	// audit.DefaultMaxLifetime.
	MaxApprovalLifetime time.Duration
	// ReplayWindow is how long after a decision a retry with its
	// idempotency key is answered from the record; 0: audit's default.
	ReplayWindow time.Duration
	// Now is the gate's clock; nil: time.Now.
	Now func() time.Time
	// Timeout is a decision's deadline when ctx has none, and the one
	// refusals name (EWP_REFUSE_TIMEOUT past it); 0: DefaultTimeout.
	Timeout time.Duration
	// Guard is the grounding guard Ground asks; its policies' ids are
	// recorded with every decision. nil: no guard.
	Guard *Guard
	// PolicySetHash is the sha256 (hex) of the edge-policy file the guard
	// loaded, recorded with every decision; "" when none was loaded.
	PolicySetHash string
	// RedactArguments names the argument members recorded as
	// RedactedMarker (by substring, ignoring case); nil:
	// DefaultRedactedArguments, empty: none.
	RedactArguments []string
	// Unavailable, when set, tells a failure of the log that is its
	// database being unreachable (answered EWP_STORE_UNAVAILABLE).
	Unavailable func(error) bool
	// Explain renders a refusal's code and message for the record; nil:
	// gate.Explain. An entrance passes its own so that the record says
	// what its answer says.
	Explain func(error) (code, message string)
	// Logger logs what cannot be answered (a late record that failed).
	Logger *slog.Logger
	// LogOff is how the operator turned this entrance's decision log
	// off, named in the refusals that need one (an approval_id, an
	// idempotency_key); "": DefaultLogOff.
	LogOff string
}

// DefaultLogOff is ewp-mcp's setting for no decision log, the one the
// refusals name unless Config.LogOff names another.
const DefaultLogOff = "ewp-mcp --audit off"

// DefaultTimeout is a decision's deadline when neither ctx nor
// Config.Timeout gives one.
const DefaultTimeout = 10 * time.Second

// Gate is the composed action gate: the warrant layer over the Ledger,
// the evidence layer, the configured layers, then the approval layer; it
// records each decision before answering. Build one with New; a Gate
// literal only judges (Judge).
type Gate struct {
	Layers []Layer
	// Approvals judges an approval the call presents; nil when the gate
	// keeps no decision log.
	Approvals *Approvals
	// Now is the gate's clock.
	Now func() time.Time

	st *state // nil unless made by New
}

// state is what a Gate made by New keeps between calls.
type state struct {
	cfg       Config
	policyIDs []string
	// callLayers are the layers of a forwarded tool call: the evidence
	// layer first, unless Config.Layers names it itself.
	callLayers []Layer
	explain    func(error) (string, string)
	log        *slog.Logger
	replays    Replays
	redact     redactor
	keys       keyLocks
	hashes     viewHashes
	policies   riskPolicies
}

// New is the gate cfg describes.
func New(cfg Config) (*Gate, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	st := &state{cfg: cfg, explain: cfg.Explain, log: cfg.Logger, redact: newRedactor(cfg.RedactArguments)}
	if st.explain == nil {
		st.explain = Explain
	}
	if st.log == nil {
		st.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Guard != nil && cfg.Guard.Policies() != nil {
		st.policyIDs = cfg.Guard.Policies().IDs()
	}
	st.callLayers = append([]Layer{EvidenceLayer{}}, cfg.Layers...)
	for _, l := range cfg.Layers {
		if l.Name() == EvidenceLayerName {
			st.callLayers = cfg.Layers
		}
	}
	g := &Gate{Layers: cfg.Layers, Now: cfg.Now, Approvals: cfg.Approvals, st: st}
	if cfg.Log != nil {
		if g.Approvals == nil {
			g.Approvals = &Approvals{Log: cfg.Log, Keys: cfg.OperatorKeys, MaxLifetime: cfg.MaxApprovalLifetime}
		}
		st.replays = Replays{Log: cfg.Log, MaxLifetime: g.Approvals.MaxLifetime, Window: cfg.ReplayWindow}
	}
	return g, nil
}

// errNotNew refuses Decide on a Gate that New did not make.
var errNotNew = errors.New("gate: Decide needs a Gate made by gate.New")

// Judgement is the gate's decision over every layer.
type Judgement struct {
	Layers   []LayerDecision
	Decision warrant.Verdict
	// UsesOnce: a single-use approval lifted the decision; it must be
	// recorded together with the approval's use (audit.Log.RecordUse).
	UsesOnce bool
}

// Judge asks every layer after first (the warrant layer's verdict, or
// SkippedWarrant) and combines them; when d, the decision being made,
// presents an approval, the approval layer then judges it against the
// combined decision. An error refuses the whole call (fail closed).
func (g Gate) Judge(ctx context.Context, in Input, first LayerDecision, d *audit.Decision) (Judgement, error) {
	return g.judge(ctx, g.Layers, in, []LayerDecision{first}, d)
}

func (g Gate) judge(ctx context.Context, layers []Layer, in Input, first []LayerDecision, d *audit.Decision) (Judgement, error) {
	judged, err := runLayers(ctx, layers, in, first)
	if err != nil {
		return Judgement{}, err
	}
	base := Combine(judged)
	if d == nil || d.ApprovalID == "" || g.Approvals == nil {
		return Judgement{Layers: judged, Decision: base}, nil
	}
	l, once, err := g.Approvals.Judge(ctx, d, base, g.Now())
	if err != nil {
		return Judgement{}, err
	}
	return Judgement{Layers: append(judged, l), Decision: warrant.Verdict(l.Decision), UsesOnce: once}, nil
}
