package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"sync"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/lockfile"
	"github.com/agent-rewind/rewind/internal/regular"
)

// SavingsFileName is the receipt's file name in the workspace's state directory (its store).
const SavingsFileName = "savings.json"

// SavingsKind is the receipt's "kind": its format and version.
const SavingsKind = "agent-rewind/savings/v1"

// SavingsNote is every receipt's note: what it counts, so no one reads it as a bill.
const SavingsNote = "replay savings only: calls the gateway answered from a recording instead of the provider, priced from each recording's usage with the price table named in prices; not provider billing; cache preservation, pruning and tape replay are not counted"

// maxSavingsFile bounds what LoadSavings reads: a receipt is a few kilobytes.
const maxSavingsFile = 4 << 20

// Savings is the replay-savings receipt (savings.json in the workspace's store). It accumulates across gateway
// runs (and across gateway processes sharing a workspace, which add under a file lock).
type Savings struct {
	// Kind is SavingsKind.
	Kind string `json:"kind"`
	// Note is SavingsNote.
	Note string `json:"note"`
	// ReplayedCalls counts calls answered from memory replay (coalesced identical requests
	// included) instead of the provider.
	ReplayedCalls int64 `json:"replayed_calls"`
	// AvoidedTokens sums the recorded usage of those calls.
	AvoidedTokens Usage `json:"avoided_tokens"`
	// AvoidedCostUSD prices each call's usage with the price table in force when it was
	// replayed.
	AvoidedCostUSD float64 `json:"avoided_cost_usd"`
	// UnpricedCalls are replayed calls whose model has no price, or whose response reported
	// no usage (a Chat Completions stream without stream_options.include_usage): their
	// tokens, where known, are counted, their cost is not.
	UnpricedCalls int64 `json:"unpriced_calls"`
	// ByModel breaks the totals down by the model the responses named.
	ByModel map[string]ModelSavings `json:"by_model"`
	// Prices names the price table last used.
	Prices PriceInfo `json:"prices"`
	// Updated is when the receipt was last written (RFC 3339, UTC); empty when never.
	Updated string `json:"updated,omitempty"`
	// History holds the totals hour by hour, oldest first, at most 720 points (30 days of
	// hours with replays); absent from receipts written before it existed.
	History []SavingsPoint `json:"history,omitempty"`
}

// ModelSavings is one model's part of a receipt.
type ModelSavings struct {
	ReplayedCalls  int64   `json:"replayed_calls"`
	AvoidedTokens  Usage   `json:"avoided_tokens"`
	AvoidedCostUSD float64 `json:"avoided_cost_usd"`
	Priced         bool    `json:"priced"`
}

// PriceInfo says which price table priced a receipt.
type PriceInfo struct {
	Source string `json:"source"`
	Date   string `json:"date"`
	// Overridden lists the models whose prices came from the configuration file.
	Overridden []string `json:"overridden,omitempty"`
}

// emptySavings is the receipt of a workspace where nothing was replayed yet.
func emptySavings() Savings {
	return Savings{Kind: SavingsKind, Note: SavingsNote, ByModel: map[string]ModelSavings{},
		Prices: PriceInfo{Source: PriceSource, Date: PriceDate}}
}

// LoadSavings reads the receipt at path. A missing file is not an error: it is the empty
// receipt (zero counts, the note). A file that is not a receipt (damaged, or of a newer
// kind) is an error matching ErrSavingsCorrupt.
func LoadSavings(path string) (Savings, error) {
	f, err := regular.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return emptySavings(), nil
	}
	if err != nil {
		return Savings{}, fmt.Errorf("read the savings receipt: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSavingsFile+1))
	if err != nil {
		return Savings{}, fmt.Errorf("read the savings receipt %s: %w", path, err)
	}
	s, err := parseSavings(data)
	if err != nil {
		return Savings{}, fmt.Errorf("%w: %s: %v: move it aside to start a new receipt (the gateway will not overwrite it)", ErrSavingsCorrupt, path, err)
	}
	return s, nil
}

// parseSavings decodes and checks a receipt.
func parseSavings(data []byte) (Savings, error) {
	if len(data) > maxSavingsFile {
		return Savings{}, fmt.Errorf("larger than %d bytes", maxSavingsFile)
	}
	var s Savings
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return Savings{}, fmt.Errorf("not JSON: %v", err)
	}
	if dec.More() {
		return Savings{}, errors.New("data after the receipt")
	}
	if s.Kind != SavingsKind {
		return Savings{}, fmt.Errorf("kind %q, want %q (a newer agent-rewind may have written it)", s.Kind, SavingsKind)
	}
	check := func(n int64, c float64) error {
		if n < 0 || c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
			return errors.New("a negative or non-finite count")
		}
		return nil
	}
	tokensOK := func(u Usage) bool {
		return u.Input >= 0 && u.Output >= 0 && u.CacheRead >= 0 && u.CacheWrite >= 0 && u.Reasoning >= 0
	}
	if err := check(s.ReplayedCalls, s.AvoidedCostUSD); err != nil || s.UnpricedCalls < 0 || !tokensOK(s.AvoidedTokens) {
		return Savings{}, errors.New("a negative or non-finite count")
	}
	if s.ByModel == nil {
		s.ByModel = map[string]ModelSavings{}
	}
	for _, m := range s.ByModel {
		if err := check(m.ReplayedCalls, m.AvoidedCostUSD); err != nil || !tokensOK(m.AvoidedTokens) {
			return Savings{}, err
		}
	}
	if err := s.checkHistory(); err != nil {
		return Savings{}, err
	}
	s.Note = SavingsNote
	return s, nil
}

// merge adds d's counts to s.
func (s *Savings) merge(d *Savings) {
	s.ReplayedCalls += d.ReplayedCalls
	s.AvoidedTokens.add(d.AvoidedTokens)
	s.AvoidedCostUSD += d.AvoidedCostUSD
	s.UnpricedCalls += d.UnpricedCalls
	if s.ByModel == nil {
		s.ByModel = map[string]ModelSavings{}
	}
	for name, dm := range d.ByModel {
		m := s.ByModel[name]
		m.ReplayedCalls += dm.ReplayedCalls
		m.AvoidedTokens.add(dm.AvoidedTokens)
		m.AvoidedCostUSD += dm.AvoidedCostUSD
		m.Priced = dm.Priced
		s.ByModel[name] = m
	}
}

// savingsFlushDelay is how long the ledger gathers replays before it writes the receipt:
// a durable write per replay would cap replay throughput at the disk's fsync rate.
const savingsFlushDelay = 500 * time.Millisecond

// ledger accumulates replay savings in memory and writes them to the receipt in the
// background (at most every savingsFlushDelay, and at close). Each write takes the receipt's
// lock, reads it, adds what accumulated since the last write, and replaces it durably, so
// several gateway processes in one workspace never lose each other's counts. A crash loses
// at most the last savingsFlushDelay of counts.
type ledger struct {
	path    string
	fleet   fleetReceipt // team mode: the receipt is the fleet's, in the database; path is unused
	prices  PriceTable
	info    PriceInfo
	prepare func() error
	log     func(format string, args ...any)

	mu       sync.Mutex
	delta    Savings
	prepared bool

	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

func newLedger(path string, fleet fleetReceipt, prices PriceTable, info PriceInfo, prepare func() error, log func(string, ...any)) *ledger {
	l := &ledger{path: path, fleet: fleet, prices: prices, info: info, prepare: prepare, log: log,
		delta: Savings{ByModel: map[string]ModelSavings{}},
		kick:  make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

// add counts one replayed call of model with usage u.
func (l *ledger) add(model string, u Usage) {
	p, priced := l.prices.Lookup(model)
	priced = priced && !u.Unmetered
	cost := 0.0
	if priced {
		cost = p.Cost(u)
	}
	l.mu.Lock()
	d := &l.delta
	d.ReplayedCalls++
	d.AvoidedTokens.add(u)
	d.AvoidedCostUSD += cost
	if !priced {
		d.UnpricedCalls++
	}
	m := d.ByModel[model]
	m.ReplayedCalls++
	m.AvoidedTokens.add(u)
	m.AvoidedCostUSD += cost
	m.Priced = priced
	d.ByModel[model] = m
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

func (l *ledger) run() {
	defer close(l.done)
	lastErr := "" // a failing write is logged once, not every half second
	for {
		select {
		case <-l.kick:
		case <-l.stop:
			return
		}
		select {
		case <-time.After(savingsFlushDelay):
		case <-l.stop:
			return // close flushes
		}
		if err := l.flush(); err != nil && err.Error() != lastErr {
			l.log("savings: %v (the counts are kept and written when this is fixed)", err)
			lastErr = err.Error()
		} else if err == nil {
			lastErr = ""
		}
	}
}

// flush writes what accumulated; on failure the counts are kept for the next try.
func (l *ledger) flush() error {
	l.mu.Lock()
	d := l.delta
	l.delta = Savings{ByModel: map[string]ModelSavings{}}
	l.mu.Unlock()
	if d.ReplayedCalls == 0 {
		return nil
	}
	err := l.write(&d)
	if err != nil {
		l.mu.Lock()
		d.merge(&l.delta)
		l.delta = d
		l.mu.Unlock()
	}
	return err
}

// fleetReceipt is where a team gateway keeps the fleet's receipt (pgtape.Store).
type fleetReceipt interface {
	UpdateSavings(ctx context.Context, change func(current []byte) ([]byte, error)) error
}

func (l *ledger) write(d *Savings) error {
	if l.fleet != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return l.fleet.UpdateSavings(ctx, func(cur []byte) ([]byte, error) {
			s := emptySavings()
			if cur != nil {
				var err error
				if s, err = parseSavings(cur); err != nil {
					return nil, fmt.Errorf("the fleet's savings receipt in the database does not parse: %w", err)
				}
			}
			s.merge(d)
			s.Prices = l.info
			now := time.Now()
			s.Updated = now.UTC().Format(time.RFC3339)
			s.mark(now)
			return json.Marshal(s)
		})
	}
	if !l.prepared && l.prepare != nil {
		if err := l.prepare(); err != nil {
			return fmt.Errorf("prepare the state directory for %s: %w", l.path, err)
		}
	}
	l.prepared = true
	lock, err := lockfile.Open(l.path+".lock", lockfile.Exclusive) // closing it releases the lock, and so does our exit
	if err != nil {
		return fmt.Errorf("write the receipt %s: %w", l.path, err)
	}
	defer lock.Close()
	cur, err := LoadSavings(l.path)
	if err != nil {
		return err
	}
	cur.merge(d)
	cur.Prices = l.info
	now := time.Now()
	cur.Updated = now.UTC().Format(time.RFC3339)
	cur.mark(now)
	data, err := json.MarshalIndent(cur, "", "  ")
	if err != nil {
		return err
	}
	if err := durable.WriteFile(l.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write the receipt %s: %w: check the workspace's permissions and free space", l.path, err)
	}
	return nil
}

// close stops the background writer and writes what is left.
func (l *ledger) close() error {
	close(l.stop)
	<-l.done
	return l.flush()
}

// FleetSavings reads a team's savings receipt from its database (zeros and the note when no
// replica has replayed anything yet).
func FleetSavings(ctx context.Context, store interface {
	Savings(ctx context.Context) ([]byte, error)
}) (Savings, error) {
	b, err := store.Savings(ctx)
	if err != nil || b == nil {
		return emptySavings(), err
	}
	s, err := parseSavings(b)
	if err != nil {
		return Savings{}, fmt.Errorf("the fleet's savings receipt in the database does not parse: %w", err)
	}
	return s, nil
}
