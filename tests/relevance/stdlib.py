"""A second relevance set: code nobody here wrote, asked about in other words.

The documents are functions and methods of some of Python's own standard library
modules, read from the running interpreter (nothing is copied into this
repository), at most ``PER_MODULE`` per module besides the wanted ones, in source
order. The queries are how a person describes what they need, without the
function's name: the case where words fail and meaning should carry the search.
This is how the issue's independent check works; the first set (``corpus.py``)
is this repository's own code and mixes in identifiers and error messages.
"""

from __future__ import annotations

import ast
import importlib
import inspect

from .corpus import Document

PER_MODULE = 25
MODULES = (
    "shutil",
    "textwrap",
    "posixpath",
    "fnmatch",
    "heapq",
    "bisect",
    "difflib",
    "tempfile",
    "csv",
    "urllib.parse",
    "html",
    "glob",
    "string",
    "calendar",
    "statistics",
    "random",
    "shlex",
    "copy",
    "gzip",
    "base64",
    "json.decoder",
    "json.encoder",
    "quopri",
    "secrets",
)
MAX_CHARS = 3000

QUERIES: list[tuple[str, str]] = [
    ("copy data from one open file to another in chunks", "shutil.copyfileobj"),
    ("delete a directory and everything inside it", "shutil.rmtree"),
    ("find where an executable program lives on the PATH", "shutil.which"),
    ("remove the indentation shared by all lines of a text block", "textwrap.dedent"),
    ("cut text down to a width and put a placeholder at the end", "textwrap.shorten"),
    ("longest common directory prefix of several paths", "posixpath.commonpath"),
    ("replace a leading tilde with the user's home directory", "posixpath.expanduser"),
    ("turn a shell wildcard pattern into a regular expression", "fnmatch.translate"),
    ("add an element to a priority queue", "heapq.heappush"),
    ("insert into a sorted list so it stays sorted", "bisect.insort_right"),
    ("suggest the closest spelling matches for a word", "difflib.get_close_matches"),
    ("securely create a temporary file and return its descriptor", "tempfile.mkstemp"),
    ("guess which delimiter a CSV file uses", "csv.Sniffer.sniff"),
    ("percent-encode characters so a string is safe in a URL", "urllib.parse.quote"),
    ("make text safe to put inside HTML", "html.escape"),
    ("capitalize the first letter of every word", "string.capwords"),
    ("does this year have a February 29", "calendar.isleap"),
    ("middle value of a list of numbers", "statistics.median"),
    ("randomly reorder the items of a list in place", "random.Random.shuffle"),
    ("escape an argument so the shell treats it literally", "shlex.quote"),
    ("duplicate an object and all objects it refers to", "copy.deepcopy"),
    ("compress bytes with gzip in memory", "gzip.compress"),
    ("split a command line into arguments like a shell would", "shlex.split"),
    ("standard deviation of a sample", "statistics.stdev"),
    ("pick k distinct random elements from a population", "random.Random.sample"),
    ("unified diff between two lists of lines", "difflib.unified_diff"),
    ("make a new temporary directory", "tempfile.mkdtemp"),
    ("split a URL into scheme, host, path and query", "urllib.parse.urlsplit"),
    ("move a file or directory to another location", "shutil.move"),
    ("decode base64 text back into bytes", "base64.b64decode"),
    ("n largest items of a collection", "heapq.nlargest"),
    ("parse the query string of a URL into a dictionary", "urllib.parse.parse_qs"),
    ("wrap a paragraph so no line is longer than a given width", "textwrap.wrap"),
    ("list the files whose names match a wildcard, recursively too", "glob.glob"),
    ("weekday of a given date", "calendar.weekday"),
    ("most common value in data", "statistics.mode"),
    (
        "turn a Python string into a JSON string literal with escapes",
        "json.encoder.py_encode_basestring",
    ),
    ("random URL-safe text token for a password reset link", "secrets.token_urlsafe"),
]


def _functions(module: str) -> list[tuple[str, str]]:
    source = inspect.getsource(importlib.import_module(module))
    found: list[tuple[str, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                text = ast.get_source_segment(source, child) or ""
                found.append((f"{prefix}.{child.name}", text[:MAX_CHARS]))
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}.{child.name}")

    visit(ast.parse(source), module)
    return found


def documents() -> list[Document]:
    """The wanted functions and up to ``PER_MODULE`` others of each module."""
    wanted = {key for _, key in QUERIES}
    docs: list[Document] = []
    for module in MODULES:
        functions = _functions(module)
        others = [pair for pair in functions if pair[0] not in wanted][:PER_MODULE]
        for key, text in [pair for pair in functions if pair[0] in wanted] + others:
            symbol = key.rsplit(".", 1)[-1]
            path = module.replace(".", "/") + ".py"
            docs.append(Document(key=key, path=path, symbol=symbol, content=text))
    missing = wanted - {doc.key for doc in docs}
    if missing:  # another Python version moved them: the set would lie
        raise LookupError(f"not in this Python's standard library: {sorted(missing)}")
    return docs
