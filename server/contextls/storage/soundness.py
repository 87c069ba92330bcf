"""Whether a database file is sound, asked of SQLite itself, never by reading its bytes.

Moving a database aside is a last resort; these give the proof it needs. Each reads
through SQLite (see ``held_files`` for why a plain ``open()`` is not allowed).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

DAMAGE: Final = frozenset({"SQLITE_NOTADB", "SQLITE_CORRUPT"})
"""``sqlite_errorname`` of a file that is not (or no longer) a sound database."""


def integrity_problem(db: sqlite3.Connection) -> str | None:
    """What SQLite's ``quick_check`` finds wrong through ``db``; None when the file is
    sound, or when the check could not run for a reason that is not damage (busy)."""
    try:
        problems = str(db.execute("PRAGMA quick_check(1)").fetchone()[0])
    except sqlite3.DatabaseError as error:
        if getattr(error, "sqlite_errorname", "") in DAMAGE:
            return str(error)
        return None
    return None if problems == "ok" else problems


def corruption_of(location: str) -> str | None:
    """Proof, from SQLite's own check on a connection of its own, that ``location`` is
    not a sound database; None when it is sound or cannot be judged."""
    try:
        probe = sqlite3.connect(
            Path(location).absolute().as_uri() + "?mode=ro", uri=True, check_same_thread=False
        )
    except sqlite3.Error:
        return None
    try:
        return integrity_problem(probe)
    finally:
        probe.close()


def header_problem(location: str) -> str | None:
    """Why the main file's header proves it is no longer a database (read through SQLite);
    None when it does not.

    An ``immutable`` connection reads the main file as it is on disk, ignoring the WAL,
    and takes no lock; SQLite reads the header first and says ``SQLITE_NOTADB`` when it
    is not its own. It is SQLite's own descriptor: SQLite shares what it knows of a
    file among the connections of a process, and closing it while another connection
    holds locks on the file only parks it, so no lock is lost (a plain ``open()`` and
    ``close()`` of the file would drop them all)."""
    uri = Path(location).absolute().as_uri() + "?immutable=1"
    try:
        probe = sqlite3.connect(uri, uri=True, check_same_thread=False)
    except sqlite3.Error:
        return None  # not proof of anything (permissions, say): the connection goes on
    try:
        probe.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as error:
        # Only the header is proof: while a checkpoint is copying the WAL into the file
        # (or after one a full disk cut short), the rest of the file may be half old, half
        # new, and SQLite's readers take the WAL's pages instead; the header never is.
        if getattr(error, "sqlite_errorname", "") == "SQLITE_NOTADB":
            return f"{location} was overwritten: it is no longer an SQLite database"
        return None
    finally:
        probe.close()
    return None
