"""Which grammar parses which file, loaded on first use.

Each grammar is its own wheel (``tree-sitter-python``…, 70-350 KB each), so the core
install carries exactly the languages it parses; a grammar is imported the first
time a file of its language is parsed (~7 ms for the first, well under 1 ms after).
Emacs Lisp has no grammar wheel: ``contextls.structure.elisp`` reads it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import tree_sitter


@dataclass(frozen=True, slots=True)
class Spec:
    """How to load one language's grammar: its wheel's module and the function in it."""

    module: str
    function: str = "language"


SPECS: Final[dict[str, Spec]] = {
    "python": Spec("tree_sitter_python"),
    "javascript": Spec("tree_sitter_javascript"),
    "typescript": Spec("tree_sitter_typescript", "language_typescript"),
    "tsx": Spec("tree_sitter_typescript", "language_tsx"),
    "go": Spec("tree_sitter_go"),
    "rust": Spec("tree_sitter_rust"),
    "java": Spec("tree_sitter_java"),
    "c": Spec("tree_sitter_c"),
    "cpp": Spec("tree_sitter_cpp"),
}
"""Languages parsed by tree-sitter."""

READER_LANGUAGES: Final = frozenset({"elisp"})
"""Languages parsed by a reader of their own (Lisp's syntax is its reader's)."""

_BY_SUFFIX: Final[dict[str, str]] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".el": "elisp",
}
_ALIASES: Final[dict[str, str]] = {
    "jsx": "javascript",
    "js": "javascript",
    "ts": "typescript",
    "typescriptreact": "tsx",
    "javascriptreact": "javascript",
    "emacs-lisp": "elisp",
    "c++": "cpp",
    "py": "python",
}
"""Names editors give (LSP language ids, fence names) for the languages above."""

SUPPORTED: Final = frozenset(SPECS) | READER_LANGUAGES


class Unsupported(Exception):
    """This text cannot be parsed here; ``str()`` says why, for a person."""


def language_of(path: str, given: str | None = None) -> str | None:
    """The language that parses ``path``: the editor's word for it when it names one we
    parse, else the file's suffix; None when neither is known here."""
    if given:
        named = _ALIASES.get(given.lower(), given.lower())
        if named in SUPPORTED:
            return named
    return _BY_SUFFIX.get(PurePosixPath(path).suffix.lower())


_loaded: dict[str, tree_sitter.Language] = {}


def grammar(language: str) -> tree_sitter.Language:
    """The tree-sitter grammar of ``language``; Unsupported when it is not installed."""
    found = _loaded.get(language)
    if found is not None:
        return found
    spec = SPECS.get(language)
    if spec is None:
        raise Unsupported(f"no grammar for {language} here; it is read as plain lines")
    try:
        import tree_sitter

        module = importlib.import_module(spec.module)
        found = tree_sitter.Language(getattr(module, spec.function)())
    except (ImportError, AttributeError, ValueError) as error:
        raise Unsupported(
            f"the {language} grammar cannot be loaded ({error}); reinstall contextls "
            f"(it needs the packages tree-sitter and {spec.module.replace('_', '-')})"
        ) from error
    _loaded[language] = found
    return found


def why_unsupported(path: str, given: str | None = None) -> str:
    """What to tell a person about a file whose structure is not known."""
    suffix = PurePosixPath(path).suffix or PurePosixPath(path).name
    return (
        f"{path}: contextls knows the structure of {', '.join(sorted(_display()))} files, "
        f"not of {given or suffix} files"
    )


def _display() -> set[str]:
    return {
        "Python",
        "JavaScript",
        "TypeScript",
        "TSX",
        "Go",
        "Rust",
        "Java",
        "C",
        "C++",
        "Emacs Lisp",
    }
