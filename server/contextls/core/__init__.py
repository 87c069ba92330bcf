"""The pure domain of contextls: items, the window, tokens, rendering.

Nothing here talks to an editor, a socket or a disk, and nothing imports
pygls or lsprotocol. The workspace (`contextls.app.workspace`) feeds it text read
elsewhere and persists what it decides; token counting gets its encodings
from a loader it is handed (`contextls.app.tokenizers` loads them offline).
"""
