package pgtape

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// Savings returns the fleet's savings receipt as stored (nil when none was written yet).
func (s *Store) Savings(ctx context.Context) ([]byte, error) {
	var b []byte
	err := s.pool.QueryRow(ctx, `SELECT receipt FROM rewind_savings WHERE id = 1`).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && len(b) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, s.dbError("read the savings receipt", err)
	}
	return b, nil
}

// UpdateSavings replaces the fleet's savings receipt with change(current) (current is nil when
// there is none), in one transaction that holds the receipt's row lock: replicas adding their
// counts at once take turns and none is lost. An error from change rolls back.
func (s *Store) UpdateSavings(ctx context.Context, change func(current []byte) ([]byte, error)) error {
	var changeErr error
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The row exists from here on, so that FOR UPDATE has something to lock.
		if _, err := tx.Exec(ctx, `INSERT INTO rewind_savings (id, receipt) VALUES (1, '') ON CONFLICT DO NOTHING`); err != nil {
			return err
		}
		var cur []byte
		if err := tx.QueryRow(ctx, `SELECT receipt FROM rewind_savings WHERE id = 1 FOR UPDATE`).Scan(&cur); err != nil {
			return err
		}
		if len(cur) == 0 {
			cur = nil
		}
		next, err := change(cur)
		if err != nil {
			changeErr = err
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE rewind_savings SET receipt = $1, updated_at = now() WHERE id = 1`, next)
		return err
	})
	if changeErr != nil {
		return changeErr
	}
	if err != nil {
		return s.dbError("update the savings receipt", err)
	}
	return nil
}
