"""The durable floor: the echo server plus one SQLite insert and commit per change.

Every ``addText`` the real server answers has been committed first (WAL,
``synchronous=NORMAL``, 1 KiB pages), so no server can answer an add faster
than a loop that frames, decodes, writes one row, commits and encodes. This
is that loop, stdlib only: a ``contextls/add*`` request inserts its params
(as JSON) into one table and commits before its answer (the params, echoed);
every other request is echoed without touching the database, as a read
(``status``) costs the real server no commit either. The database is opened
with the real store's pragmas (imported from ``contextls.storage.connection`` so
the two cannot drift apart).

``--commit`` says when the transaction ends:

- ``each`` (default): after every change, the answer written right after its
  commit. What a server must do when it answers each request on its own
  (stock pygls).
- ``read``: once per read of stdin, after every request that read brought,
  and then all their answers in one write. The rule of the real server's
  outbox (pipelined requests in one read share one commit); sequential
  requests get one commit each either way.
- ``none``: no database at all, to check that this loop costs what
  ``echo_server.py`` costs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
from typing import Any

from contextls.storage.connection import PAGE_SIZE, SYNCHRONOUS, WAL_CHECKPOINT_PAGES

_READ = 1 << 16


def open_db(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(f"PRAGMA page_size = {PAGE_SIZE}")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
    db.execute(f"PRAGMA synchronous = {SYNCHRONOUS['normal']}")
    db.execute("CREATE TABLE IF NOT EXISTS changes (id INTEGER PRIMARY KEY, params TEXT)")
    return db


def answer(msg: dict[str, Any]) -> bytes:
    method = msg.get("method")
    if method == "initialize":
        result: Any = {"capabilities": {}}
    elif method == "shutdown":
        result = None
    else:
        result = msg.get("params")
    body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def serve(db: sqlite3.Connection | None, commit: str) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    out = sys.stdout.buffer
    buffer = b""
    while True:
        chunk = await reader.read(_READ)
        if not chunk:
            return
        buffer += chunk
        held: list[bytes] = []  # answers waiting for this read's commit (--commit read)
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                break
            length = 0
            for line in buffer[:end].split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(buffer) < end + 4 + length:
                break
            body = buffer[end + 4 : end + 4 + length]
            buffer = buffer[end + 4 + length :]
            msg: dict[str, Any] = json.loads(body)
            method = msg.get("method")
            if method == "exit":
                return
            if "id" not in msg:
                continue
            if db is not None and isinstance(method, str) and method.startswith("contextls/add"):
                if not db.in_transaction:
                    db.execute("BEGIN IMMEDIATE")
                db.execute("INSERT INTO changes (params) VALUES (?)", (json.dumps(msg["params"]),))
                if commit == "each":
                    db.execute("COMMIT")
            if commit == "read":
                held.append(answer(msg))
            else:
                out.write(answer(msg))
                out.flush()
        if db is not None and db.in_transaction:
            db.execute("COMMIT")
        if held:
            out.write(b"".join(held))
            out.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="the database file (created if missing)")
    parser.add_argument("--commit", choices=("each", "read", "none"), default="each")
    args = parser.parse_args()
    db = None if args.commit == "none" else open_db(args.db)
    try:
        asyncio.run(serve(db, args.commit))
    finally:
        if db is not None:
            db.close()


if __name__ == "__main__":
    main()
