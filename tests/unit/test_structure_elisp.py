"""Emacs Lisp definitions against Emacs itself: its own ``read`` over its own lisp
files says where each top-level form starts and ends, and what it defines."""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

import pytest

from contextls.structure.elisp import is_definer
from contextls.structure.symbols import symbols

EMACS = shutil.which("emacs")
LISP = sorted(Path("/usr/share/emacs").glob("*/lisp"))
pytestmark = pytest.mark.skipif(
    EMACS is None or not LISP, reason="needs Emacs and its lisp files (make test-emacs installs it)"
)

READER = r"""
(dolist (file command-line-args-left)
  (with-temp-buffer
    (insert-file-contents file)
    (emacs-lisp-mode)
    (goto-char (point-min))
    (princ (format "FILE %s\n" file))
    (condition-case nil
        (while t
          (forward-comment (buffer-size))
          (let* ((start (point))
                 (form (read (current-buffer)))
                 (end (point)))
            (when (consp form)
              (let* ((head (car form))
                     (second (car-safe (cdr form)))
                     (name (cond ((symbolp second) second)
                                 ((and (consp second) (eq (car second) 'quote)) (cadr second))
                                 ((and (consp second) (symbolp (car second))) (car second)))))
                (when (and (symbolp head) name (symbolp name))
                  (princ (format "%d %d %s %s\n" (line-number-at-pos start)
                                 (line-number-at-pos (1- end)) head name)))))))
      (end-of-file nil))))
(setq command-line-args-left nil)
"""


def sample() -> list[Path]:
    files = sorted(p for p in LISP[-1].rglob("*.el.gz") if "/obsolete/" not in str(p))
    return files[:: max(1, len(files) // 40)]


def test_top_level_definitions_match_what_emacs_reads(tmp_path: Path) -> None:
    plain = []
    for number, path in enumerate(sample()):
        target = tmp_path / f"{number}-{path.name.removesuffix('.gz')}"
        target.write_bytes(gzip.decompress(path.read_bytes()))
        plain.append(target)
    script = tmp_path / "reader.el"
    script.write_text(READER)
    assert EMACS is not None
    out = subprocess.run(
        [EMACS, "--batch", "-Q", "-l", str(script), *map(str, plain)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    expected: dict[str, list[tuple[str, int, int]]] = {}
    current = ""
    for line in out.splitlines():
        if line.startswith("FILE "):
            current = line[5:]
            expected[current] = []
        elif line.strip():
            start, end, head, name = line.split(" ", 3)
            if is_definer(head):
                expected[current].append((name, int(start), int(end)))
    assert sum(map(len, expected.values())) > 500, "too few definitions to prove anything"
    for file, wanted in expected.items():
        # Lines as Emacs counts them: a carriage return alone ends none.
        text = Path(file).read_bytes().decode(errors="replace")
        found = [(s.name, s.start_line, s.end_line) for s in symbols(text, "elisp")]
        assert found == wanted, file
