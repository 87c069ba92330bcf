"""Semantic retrieval of the archive (the optional ``contextls[semantic]`` extra).

Nothing here imports pygls or lsprotocol; each module takes plain values or a
``sqlite3.Connection`` so the service can call it from any layer.
"""
