"""The pure domain of contextls: items, the window, tokens, rendering.

Nothing here talks to an editor, a socket or a disk; the workspace service
(`contextls.workspace`) feeds it text and persists what it decides.
"""
