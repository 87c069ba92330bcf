"""Named migrations, applied once each and recorded in the ``migrations`` table.

Every owner of tables in the database (the store; the semantic extra) lists its
steps in order, named ``N_what`` (the store's) or ``OWNER.N_what``. Opening a
database applies the steps it lacks in one write transaction. A database that
records a step of an owner this contextls does not know was written by a newer
contextls: it is refused and left as it is.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass

from contextls.storage.errors import DevelopmentFile, NewerSchema
from contextls.storage.transaction import write_transaction

log = logging.getLogger(__name__)

LEGACY_SCHEMA = "6"
"""What development builds before the first release wrote in ``meta``; such a file
holds exactly what ``1_initial`` makes, and is adopted as that."""


@dataclass(frozen=True)
class Migration:
    name: str
    script: str
    """SQL statements, triggers included."""


@dataclass(frozen=True)
class Migrations:
    """One owner's steps, oldest first."""

    prefix: str
    """What the names of this owner's steps start with ("" for the store's own)."""
    steps: tuple[Migration, ...]

    def owns(self, name: str) -> bool:
        return name.startswith(self.prefix) if self.prefix else "." not in name


def is_new(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None


def applied(db: sqlite3.Connection) -> list[str]:
    """The names of the steps this database has had, oldest first."""
    if _has_table(db, "migrations"):
        return [row[0] for row in db.execute("SELECT name FROM migrations ORDER BY rowid")]
    if _has_table(db, "meta"):
        row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is not None and str(row[0]) == LEGACY_SCHEMA:
            return ["1_initial"]
        raise DevelopmentFile(
            f"was written by a development build of contextls (schema "
            f"{row[0] if row else '?'}) that this one cannot read"
        )
    return []


def pending(db: sqlite3.Connection, owner: Migrations, location: str) -> list[Migration]:
    """The owner's steps this database lacks; NewerSchema when it has one we do not know."""
    done = [name for name in applied(db) if owner.owns(name)]
    known = {step.name for step in owner.steps}
    unknown = [name for name in done if name not in known]
    if unknown:
        raise NewerSchema(
            f"{location} was written by a newer contextls (it has {', '.join(unknown)}, which "
            "this one does not know); upgrade contextls, or set `storage` to another file"
        )
    return [step for step in owner.steps if step.name not in done]


def upgrade(db: sqlite3.Connection, owner: Migrations, location: str) -> list[str]:
    """Apply the owner's missing steps in one write transaction; their names."""
    if not pending(db, owner, location) and not _has_table(db, "meta"):
        return []  # read without the write lock: opening needs no transaction
    with write_transaction(db):
        steps = pending(db, owner, location)  # again: another process may have done it
        adopted = applied(db) if _has_table(db, "meta") else []
        db.execute(
            "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at INTEGER)"
        )
        if adopted:  # its steps are recorded, and the old table goes
            now = int(time.time())
            db.executemany(
                "INSERT OR IGNORE INTO migrations VALUES (?, ?)", [(n, now) for n in adopted]
            )
            db.execute("DROP TABLE meta")
        for step in steps:
            for statement in statements(step.script):
                db.execute(statement)
            db.execute("INSERT INTO migrations VALUES (?, ?)", (step.name, int(time.time())))
    names = [step.name for step in steps]
    if names:
        log.info("%s: applied %s", location, ", ".join(names))
    return names


def statements(script: str) -> Iterator[str]:
    """The SQL statements of a script (triggers included), one by one."""
    pending_text = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--") and not pending_text:
            continue
        pending_text += line
        if sqlite3.complete_statement(pending_text):
            yield pending_text.strip()
            pending_text = ""


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    found = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return found is not None
