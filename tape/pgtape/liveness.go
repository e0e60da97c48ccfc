package pgtape

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// shouldPing decides whether the pool pings a connection before handing it out (a round trip
// before the caller's statement). pgx's default pings every connection idle for over a second,
// which on a replica serving a call every few seconds puts a round trip before nearly every
// statement, and trusts one idle for less, even if the server has closed it since. A connection
// the server closed (a restart, pg_terminate_backend, an idle timeout) has something to read,
// its farewell or the end of the stream, so a look at the socket that does not wait tells it from
// a live one; only such a connection, or one idle for over a minute (its network path may have
// died without a word), is pinged, and the pool replaces it if the ping fails.
func shouldPing(_ context.Context, p pgxpool.ShouldPingParams) bool {
	return p.IdleDuration > time.Minute || !quiet(p.Conn.PgConn().Conn())
}
