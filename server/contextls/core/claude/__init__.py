"""Claude's token counts offline, from ctok's reconstruction of its vocabularies.

The text-to-stream rules (``tables``, ``letters``, ``borders``, ``stream``) are ctok 1.3.0's
(PyPI, MIT, Sander Land; ``data/LICENSE.ctok``), copied because ctok's metadata asks for
Python 3.12 while contextls runs on 3.11 (the code runs on both). ``counting`` tiles the
stream; ``data/`` holds the pieces of each family, written by ``scripts/claude_vocab.py``.
"""
