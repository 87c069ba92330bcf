"""What the server and its clients share that is not the wire contract.

``places`` (where the daemon of a database listens and logs, and who may connect),
``build`` (what identifies the installed code, so a client can tell its daemon runs other
code) and ``surrogates`` (where a JSON message holds a lone surrogate). Stdlib only and
light: every CLI command imports it.
"""
