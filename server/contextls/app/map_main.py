"""The maps' process's entry point: its parsing workers are started before it imports the
rest of itself (its ranking, the tokenizers, the index: ~0.08 s), so that they start
while it does; a first map waits for both.
"""

from __future__ import annotations

from multiprocessing.connection import Connection

from contextls.app.workers import Workers, for_maps


def serve(connection: Connection) -> None:
    """The maps' process's main: answer the daemon's requests until it goes away."""
    workers = Workers(for_maps())
    workers.warm("contextls.app.parse_jobs")
    from contextls.app import map_ranker

    map_ranker.serve(connection, workers)
