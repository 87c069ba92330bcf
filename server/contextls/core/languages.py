"""Fence languages for rendered items, guessed from a file name when the editor gave none."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Final

_BY_SUFFIX: Final[dict[str, str]] = {
    ".py": "python",
    ".pyi": "python",
    ".el": "elisp",
    ".lisp": "lisp",
    ".cl": "lisp",
    ".clj": "clojure",
    ".scm": "scheme",
    ".rkt": "racket",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "jsx",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".rs": "rust",
    ".go": "go",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".java": "java",
    ".kt": "kotlin",
    ".rb": "ruby",
    ".php": "php",
    ".cs": "csharp",
    ".swift": "swift",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "zsh",
    ".fish": "fish",
    ".ps1": "powershell",
    ".sql": "sql",
    ".md": "markdown",
    ".rst": "rst",
    ".json": "json",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".xml": "xml",
    ".html": "html",
    ".css": "css",
    ".scss": "scss",
    ".lua": "lua",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".r": "r",
    ".jl": "julia",
    ".dart": "dart",
    ".scala": "scala",
    ".nix": "nix",
    ".tex": "latex",
    ".vim": "vim",
    ".proto": "protobuf",
    ".tf": "hcl",
    ".zig": "zig",
}
_BY_NAME: Final[dict[str, str]] = {
    "Makefile": "make",
    "GNUmakefile": "make",
    "Dockerfile": "dockerfile",
    "CMakeLists.txt": "cmake",
    "Cask": "elisp",
    "Eask": "elisp",
}


def guess_language(path: str | None) -> str | None:
    if not path:
        return None
    name = PurePosixPath(path).name
    return _BY_NAME.get(name) or _BY_SUFFIX.get(PurePosixPath(name).suffix.lower())
