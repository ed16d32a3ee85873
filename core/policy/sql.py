"""Whether a SQL text only reads: classified with a real SQL parser (sqlglot), never a regular expression.

`is_read(sql)` is True only when every statement in the text is a query (SELECT, a set operation of queries,
VALUES, a parenthesised query, DESCRIBE, or EXPLAIN of such a query) and nothing inside any of them writes,
locks or changes the session. Everything else is *not a read*, and so is what cannot be told for sure:

- several statements (`SELECT 1; DROP TABLE t`) are a read only if each one is;
- a write nested anywhere: a data-modifying CTE (`WITH d AS (DELETE … RETURNING *) SELECT …`), `SELECT … INTO`
  (creates a table), `INSERT … SELECT`;
- `SELECT … FOR UPDATE` / `FOR SHARE`: it takes row locks, the first half of a write; **not a read** (a choice:
  a read-only role cannot run it either on PostgreSQL);
- `COPY`, `PRAGMA` (either form: `PRAGMA x = 1` writes, and telling the reading ones apart is not worth the risk),
  `ATTACH`, `SET`, transactions, `CALL`, `SHOW`, `VACUUM` and anything else the parser only knows as a command;
- `EXPLAIN [ANALYZE] <statement>` is what its statement is (EXPLAIN ANALYZE runs it);
- calls of functions known to write or act (`nextval`, `setval`, `set_config`, `lo_import`, `dblink_exec`,
  `pg_terminate_backend`, `load_extension` …). A user-defined function that writes cannot be seen by any parser:
  give the connection a read-only role as well;
- text that does not parse, is empty, or is longer than MAX_CHARS (fail closed).

Comments and case are the tokenizer's business: `/* x */ dElEtE from t` is a DELETE, and
`select * from t -- ; drop table t` is one SELECT.
"""

from __future__ import annotations

import logging
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

MAX_CHARS = 100_000  # a longer text is not parsed (its cost grows with its size): not a read
_EXPLAIN_OPTIONS = frozenset({"ANALYZE", "ANALYSE", "VERBOSE", "QUERY", "PLAN", "COSTS", "BUFFERS"})

# node types that write, lock or change the session, wherever they appear in a statement
_WRITES = tuple(
    getattr(exp, name)
    for name in (
        "DML",
        "DDL",
        "Insert",
        "Update",
        "Delete",
        "Merge",
        "Create",
        "Drop",
        "Alter",
        "TruncateTable",
        "Copy",
        "Into",
        "Lock",
        "Pragma",
        "Set",
        "Transaction",
        "Commit",
        "Rollback",
        "Grant",
        "Revoke",
        "Command",
        "LoadData",
        "Use",
        "Analyze",
        "Attach",
        "Detach",
        "Install",
        "Cache",
        "Uncache",
        "Refresh",
    )
    if hasattr(exp, name)
)
_READ_ROOTS = (exp.Query, exp.Subquery, exp.Values, exp.Describe)
_ACTING_FUNCTIONS = frozenset(
    {
        "nextval",
        "setval",
        "set_config",
        "lo_import",
        "lo_export",
        "lo_unlink",
        "lo_create",
        "lo_put",
        "lo_from_bytea",
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_promote",
        "pg_switch_wal",
        "pg_advisory_lock",
        "pg_advisory_xact_lock",
        "pg_try_advisory_lock",
        "pg_try_advisory_xact_lock",
        "dblink_exec",
        "dblink",
        "load_extension",
        "writefile",
        "edit",
    }
)

# sqlglot logs a warning for each statement it falls back to parsing as a command; the answer says it already
logging.getLogger("sqlglot").addFilter(lambda record: "unsupported syntax" not in record.getMessage())


def is_read(sql: str) -> bool:
    """True only when the text certainly only reads (see the module's docstring)."""
    return classify(sql) is None


@lru_cache(maxsize=4096)
def classify(sql: str) -> str | None:
    """None when the text only reads, else why it is not a read (shown in a policy's explanation)."""
    if not isinstance(sql, str):
        return "the query is not text"
    if len(sql) > MAX_CHARS:
        return f"the query is longer than {MAX_CHARS:,} characters and was not parsed"
    try:
        statements = [s for s in sqlglot.parse(sql) if s is not None]
    except (SqlglotError, RecursionError, ValueError) as exc:
        return f"the query does not parse ({type(exc).__name__})"
    if not statements:
        return "the query is empty"
    for statement in statements:
        why = _statement(statement)
        if why:
            return why
    return None


def _statement(statement: exp.Expr, depth: int = 0) -> str | None:
    if isinstance(statement, exp.Command) and str(statement.this).upper() == "EXPLAIN" and depth < 3:
        return _explained(statement.expression.name if statement.expression else "", depth)
    if not isinstance(statement, _READ_ROOTS):
        return f"{_kind(statement)} statement, not a query"
    for node in statement.walk():
        if isinstance(node, _WRITES):
            return f"{_kind(node)} inside the statement"
        if isinstance(node, exp.Func):
            name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
            if name in _ACTING_FUNCTIONS:
                return f"a call of {name}(), which writes or acts"
    return None


def _explained(rest: str, depth: int) -> str | None:
    """EXPLAIN's statement, past its options (`ANALYZE`, `VERBOSE`, `(ANALYZE, FORMAT JSON)`), classified."""
    tokens = sqlglot.tokenize(rest)
    start = 0
    if tokens and tokens[0].text == "(":
        closing = next((i for i, t in enumerate(tokens) if t.text == ")"), None)
        if closing is None:
            return "an EXPLAIN whose options do not close"
        start = closing + 1
    while start < len(tokens) and tokens[start].text.upper() in _EXPLAIN_OPTIONS:
        start += 1
    if start >= len(tokens):
        return "an EXPLAIN of nothing"
    inner = rest[tokens[start].start :]
    try:
        statements = [s for s in sqlglot.parse(inner) if s is not None]
    except (SqlglotError, RecursionError, ValueError) as exc:
        return f"an EXPLAIN of a statement that does not parse ({type(exc).__name__})"
    if len(statements) != 1:
        return "an EXPLAIN of several statements"
    why = _statement(statements[0], depth + 1)
    return f"EXPLAIN of {why}" if why else None


def _kind(node: exp.Expr) -> str:
    if isinstance(node, exp.Command):
        return str(node.this).upper()
    return type(node).__name__.upper()
