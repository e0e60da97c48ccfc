package command

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/agent-rewind/rewind/tape/pgtape"
)

// GatewayGroup is "agent-rewind gateway": serving is the default; migrate and keys manage a
// team gateway's database.
type GatewayGroup struct {
	Serve   GatewayCmd        `cmd:"" default:"withargs" help:"Serve the gateway (the default: agent-rewind gateway [flags])."`
	Migrate GatewayMigrateCmd `cmd:"" help:"Apply the team gateway's database migrations (REWIND_DATABASE_URL); replicas never migrate on their own. Running it again is a no-op."`
	Keys    GatewayKeysCmd    `cmd:"" help:"Create, list and revoke a team gateway's API keys (stored hashed; a new key is shown once)."`
}

// GatewayKeysCmd groups the API-key commands.
type GatewayKeysCmd struct {
	Create GatewayKeysCreateCmd `cmd:"" help:"Create an API key for a tenant and print it once."`
	List   GatewayKeysListCmd   `cmd:"" help:"List a tenant's API keys (ids and dates, never the keys)."`
	Revoke GatewayKeysRevokeCmd `cmd:"" help:"Revoke a tenant's API key: every replica refuses it from the next request on."`
}

// withTeamStore connects to REWIND_DATABASE_URL (no deployment key is needed here), runs fn
// with a minute to finish, and closes the connection: what every team command does around its
// one call.
func withTeamStore(fn func(ctx context.Context, s *pgtape.Store) error) error {
	s, err := pgtape.Open(context.Background(), pgtape.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return fn(ctx, s)
}

// GatewayMigrateCmd applies the schema migrations.
type GatewayMigrateCmd struct{}

// migrateResult is the --json shape of gateway migrate.
type migrateResult struct {
	Database      string `json:"database"`
	Applied       []int  `json:"applied"`
	SchemaVersion int    `json:"schema_version"`
}

// Run applies what the database lacks.
func (GatewayMigrateCmd) Run(env *Env) error {
	var applied []int
	var name string
	err := withTeamStore(func(ctx context.Context, s *pgtape.Store) (err error) {
		name = s.Name()
		applied, err = s.Migrate(ctx)
		return err
	})
	if err != nil {
		return err
	}
	res := migrateResult{Database: name, Applied: applied, SchemaVersion: pgtape.SchemaVersion}
	if res.Applied == nil {
		res.Applied = []int{}
	}
	return env.Emit(res, func(w io.Writer) error {
		if len(applied) == 0 {
			_, err := fmt.Fprintf(w, "%s: schema version %d is current; nothing to apply\n", res.Database, res.SchemaVersion)
			return err
		}
		_, err := fmt.Fprintf(w, "%s: applied migrations %v; schema version %d\n", res.Database, applied, res.SchemaVersion)
		return err
	})
}

// GatewayKeysCreateCmd creates a key.
type GatewayKeysCreateCmd struct {
	Tenant string `required:"" placeholder:"T" help:"The tenant the key authenticates as."`
}

// createdKey is the --json shape of gateway keys create.
type createdKey struct {
	pgtape.APIKey
	Key string `json:"key"`
}

// Run creates the key and prints it once.
func (c GatewayKeysCreateCmd) Run(env *Env) error {
	var k pgtape.APIKey
	var whole string
	err := withTeamStore(func(ctx context.Context, s *pgtape.Store) (err error) {
		k, whole, err = s.CreateKey(ctx, c.Tenant)
		return err
	})
	if err != nil {
		return err
	}
	return env.Emit(createdKey{k, whole}, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s\n", whole)
		if err == nil {
			_, err = fmt.Fprintf(env.Stderr, "agent-rewind: created key %s for tenant %q; it is shown only now (the database keeps its hash): callers send it in the x-rewind-key header\n", k.ID, k.Tenant)
		}
		return err
	})
}

// GatewayKeysListCmd lists a tenant's keys.
type GatewayKeysListCmd struct {
	Tenant string `required:"" placeholder:"T" help:"The tenant whose keys to list."`
}

// keyList is the --json shape of gateway keys list.
type keyList struct {
	Tenant string          `json:"tenant"`
	Keys   []pgtape.APIKey `json:"keys"`
}

// Run lists the keys, oldest first.
func (c GatewayKeysListCmd) Run(env *Env) error {
	var keys []pgtape.APIKey
	err := withTeamStore(func(ctx context.Context, s *pgtape.Store) (err error) {
		keys, err = s.ListKeys(ctx, c.Tenant)
		return err
	})
	if err != nil {
		return err
	}
	if keys == nil {
		keys = []pgtape.APIKey{}
	}
	return env.Emit(keyList{c.Tenant, keys}, func(w io.Writer) error {
		if len(keys) == 0 {
			_, err := fmt.Fprintf(w, "tenant %q has no keys: create one with `agent-rewind gateway keys create --tenant %s`\n", c.Tenant, c.Tenant)
			return err
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tCREATED\tSTATE")
		for _, k := range keys {
			state := "active"
			if k.RevokedAt != nil {
				state = "revoked " + k.RevokedAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", k.ID, k.CreatedAt.UTC().Format(time.RFC3339), state)
		}
		return tw.Flush()
	})
}

// GatewayKeysRevokeCmd revokes a key.
type GatewayKeysRevokeCmd struct {
	Tenant string `required:"" placeholder:"T" help:"The tenant the key belongs to."`
	ID     string `arg:"" help:"The key's id (from keys list)."`
}

// revoked is the --json shape of gateway keys revoke.
type revoked struct {
	Tenant  string `json:"tenant"`
	ID      string `json:"id"`
	Revoked bool   `json:"revoked"`
}

// Run revokes the key.
func (c GatewayKeysRevokeCmd) Run(env *Env) error {
	err := withTeamStore(func(ctx context.Context, s *pgtape.Store) error { return s.RevokeKey(ctx, c.Tenant, c.ID) })
	if err != nil {
		return err
	}
	return env.Emit(revoked{c.Tenant, c.ID, true}, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "revoked key %s of tenant %q\n", c.ID, c.Tenant)
		return err
	})
}
