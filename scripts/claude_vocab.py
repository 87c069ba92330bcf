"""Write contextls's copy of ctok's Claude vocabularies from an unpacked ctok wheel.

ctok (PyPI, MIT) ships each family's pieces with the evidence that each is one token;
counting needs only the pieces, the byte-prefix tokens, the contraction suffixes and four
measured scalars, so the copy keeps those (~1/10 of the size). Run it when ctok publishes
new vocabularies:

    pip download --no-deps ctok && unzip ctok-*.whl -d /tmp/ctok
    python scripts/claude_vocab.py /tmp/ctok/ctok
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "server" / "contextls" / "core" / "claude" / "data"
FAMILIES = {"v3": "pieces_v3.json", "v4_7": "pieces_v4_7.json"}
META = ("message_overhead", "fold_quotes", "allcaps_min")


def main(ctok_dir: str) -> None:
    sys.path.insert(0, str(Path(ctok_dir).parent))
    from ctok.notation import parse_marked  # the notation's one reader

    for family, filename in FAMILIES.items():
        doc = json.loads((Path(ctok_dir) / "data" / filename).read_text(encoding="utf-8"))
        tokens = doc["tokens"]
        pieces = sorted(
            parse_marked(piece)
            for group, entries in tokens.items()
            if group != "bytes_fallback"
            for piece in entries
        )
        compact = {
            "meta": {key: doc["meta"][key] for key in META},
            "pieces": pieces,
            "bytes": sorted(tokens["bytes_fallback"]),
            "contractions": sorted(tokens["contractions"]),
        }
        text = json.dumps(compact, ensure_ascii=False, separators=(",", ":"))
        (OUT / f"claude_{family}.json.gz").write_bytes(gzip.compress(text.encode(), mtime=0))


if __name__ == "__main__":
    main(sys.argv[1])
