"""The sole owner of the SQLite schema: opening the database (read-only, moved aside,
damage), its migrations, the window rows, the archive and its keyword index, aliases,
retention, and rebuilding a database destroyed under a running server (``rescue``)."""
