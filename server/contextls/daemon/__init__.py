"""Process wiring: the shared daemon on its Unix socket (``server``) and the server's
entry points (``cli``: ``contextls serve``, ``python -m contextls daemon``)."""
