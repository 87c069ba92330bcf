"""The use cases: what a request does to a workspace's window, from reading a file to
committing the change.

``service`` holds the process's windows and its store; ``session`` is one client's
folders and settings; ``workspace`` is one folder's window, and every change goes
through its ``change`` (the unit of work: take the write lock, change the window,
write the rows; ``unit_of_work`` commits and announces). Around them: where text
comes from (``sources``, ``files``, ``expand``), bulk adds (``bulk``), export and
import (``transfer``), settings, tokenizers, and Roo Code's conversation window
(``prepare``, ``condense``).
"""
