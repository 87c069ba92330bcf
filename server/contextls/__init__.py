"""contextls: a language server that keeps the LLM context of each workspace."""

__version__ = "0.2.0"
