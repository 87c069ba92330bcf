"""Counting works whatever tiktoken's cache settings say, and writes no file.

Each case runs in a fresh interpreter (an encoding is loaded once per process), in
an empty working directory, with network access made impossible for tiktoken.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

COUNT = (
    "import socket\n"
    "def refuse(*args, **kwargs):\n"
    "    raise OSError('no network here')\n"
    "socket.create_connection = refuse\n"
    "from contextls.app.tokenizers import load_encoding\n"
    "print(len(load_encoding('o200k_base').encode('hello world')),"
    " len(load_encoding('cl100k_base').encode('hello world')))\n"
)
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def files_under(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file())


@pytest.mark.parametrize("case", ["empty", "read-only", "corrupt"])
def test_counting_needs_no_cache_and_writes_none(tmp_path: Path, case: str) -> None:
    cwd, cache = tmp_path / "cwd", tmp_path / "cache"
    cwd.mkdir()
    cache.mkdir()
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache)}
    if case == "empty":
        env["TIKTOKEN_CACHE_DIR"] = ""  # tiktoken's documented way to turn its cache off
    elif case == "read-only":
        cache.chmod(0o500)
    else:  # a file where tiktoken looks for o200k, that is not the pinned one
        (cache / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(b"garbage\n")
    before = files_under(cache)
    done = subprocess.run(
        [sys.executable, "-P", "-c", COUNT],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    cache.chmod(0o700)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "2"]
    assert files_under(cwd) == []
    assert files_under(cache) == before
