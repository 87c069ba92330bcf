"""One search path over the archive: by its words (the store's index), by meaning (a
provider that registers itself, see ``meaning``), or both fused. Search and render's
"Relevant history" call only this package."""
