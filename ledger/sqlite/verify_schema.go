package sqlite

import (
	"github.com/ewp-go/ewp/ledger"

	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"sync"
)

// schemaObject is one row of sqlite_master.
type schemaObject struct {
	typ, table string
	sql        sql.NullString // NULL for the automatic indexes of UNIQUE and PRIMARY KEY
}

// expectedSchema is sqlite_master of a new ledger made by this build,
// keyed by object name: the DDL is laid out in an in-memory database once
// per process, so the comparison follows the schema and the SQLite version
// this build links instead of a hand-kept copy (FTS5's shadow tables
// included).
var expectedSchema = sync.OnceValues(func() (map[string]schemaObject, error) {
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, schemaDDL+triggersDDL()); err != nil {
		return nil, fmt.Errorf("lay out the reference schema: %w", err)
	}
	return readSchema(ctx, db)
})

func readSchema(ctx context.Context, q querier) (map[string]schemaObject, error) {
	return readSchemaWhere(ctx, q, "1")
}

// readSchemaWhere reads the sqlite_master rows matching cond (SQL text of
// this package, never input).
func readSchemaWhere(ctx context.Context, q querier, cond string) (map[string]schemaObject, error) {
	rows, err := q.QueryContext(ctx, `SELECT type, name, tbl_name, sql FROM sqlite_master WHERE `+cond)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]schemaObject{}
	for rows.Next() {
		var o schemaObject
		var name string
		if err := rows.Scan(&o.typ, &name, &o.table, &o.sql); err != nil {
			return nil, err
		}
		out[name] = o
	}
	return out, rows.Err()
}

// schema compares the file's sqlite_master with what this build creates.
// A missing, extra or altered table or index is returned at once (the
// other checks would read the wrong thing); trigger differences come back
// separately, to be reported after the content checks, so that a row
// edited after its trigger was dropped is named as the edit.
func (v *verifier) schema() (triggers, structural *ledger.Break, err error) {
	want, err := expectedSchema()
	if err != nil {
		return nil, nil, ledgerErr("verify", err)
	}
	got, err := readSchema(v.ctx, v.tx)
	if err != nil {
		return nil, nil, ledgerErr("verify: read sqlite_master", err)
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		what := schemaDiff(n, want[n], got[n])
		if what == "" {
			continue
		}
		brk := &ledger.Break{Table: "sqlite_master", What: what + "; the ledger's schema was changed outside ewp (restore the file from a copy that verifies)"}
		if want[n].typ == "trigger" || got[n].typ == "trigger" {
			if triggers == nil {
				triggers = brk
			}
			continue
		}
		return nil, brk, nil
	}
	return triggers, nil, nil
}

// schemaDiff describes how the object named n differs; "" when it doesn't.
func schemaDiff(n string, want, got schemaObject) string {
	switch {
	case got.typ == "":
		return fmt.Sprintf("%s %s is missing", want.typ, n)
	case want.typ == "":
		return fmt.Sprintf("%s %s is not part of the ledger schema", got.typ, n)
	case want != got:
		return fmt.Sprintf("%s %s differs from the ledger schema (found %q, want %q)", got.typ, n, got.sql.String, want.sql.String)
	}
	return ""
}

// metaKeys are the ledger_meta rows a ledger may hold, with the values this
// build accepts.
var metaKeys = map[string]func(string) bool{
	"schema_version": func(v string) bool { return v == strconv.Itoa(SchemaVersion) },
	metaSearchText:   func(v string) bool { return v == searchTextFolded },
}

// meta checks ledger_meta: exactly the keys this build writes.
func (v *verifier) meta() (*ledger.Break, error) {
	rows, err := v.tx.QueryContext(v.ctx, `SELECT key, value FROM ledger_meta ORDER BY key`)
	if err != nil {
		return nil, ledgerErr("verify: read ledger_meta", err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var k, val string
		if err := rows.Scan(&k, &val); err != nil {
			return nil, ledgerErr("verify: read ledger_meta", err)
		}
		ok, known := metaKeys[k]
		if !known || !ok(val) {
			return &ledger.Break{Table: "ledger_meta", What: fmt.Sprintf("row %q = %q is not one this build writes", k, val)}, nil
		}
		v.applyMeta(k, val)
		seen[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, ledgerErr("verify: read ledger_meta", err)
	}
	if !seen["schema_version"] {
		return &ledger.Break{Table: "ledger_meta", What: "schema_version is missing"}, nil
	}
	return nil, nil
}

// applyMeta lets later checks follow what ledger_meta says.
func (v *verifier) applyMeta(key, value string) {
	if key == metaSearchText {
		v.foldedText = value == searchTextFolded
	}
}

// ftsText is the search index text the writer stores for an assertion.
func (v *verifier) ftsText(text string) string { return searchText(text, v.foldedText) }
