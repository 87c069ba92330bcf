"""The LSP edge: a pygls server whose handlers convert params and call the service.

The transport, framing and dispatch of ``contextls/*`` requests are our own,
for measured reasons: see README.md in this directory before simplifying
them back onto pygls' defaults.
"""
