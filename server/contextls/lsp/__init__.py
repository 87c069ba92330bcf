"""The LSP edge: a pygls server whose handlers convert params and call the service."""
