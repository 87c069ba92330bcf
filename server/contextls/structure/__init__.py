"""What the code says about itself: definitions by qualified name, outlines, a ranked map.

Pure (text in, structure out; no I/O, no pygls): ``languages`` says which grammar
parses a file, ``parse`` turns text into a tree, ``symbols`` finds the definitions
with their qualified names and line spans, ``outline`` shows a file without its
bodies, ``tags`` and ``repomap`` rank a repository's definitions and fit them to a
token share. A language without a grammar here (or without tree-sitter installed)
is ``Unsupported``, with the reason in words a person can act on.
"""
