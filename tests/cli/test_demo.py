"""`make run`: the scripted session of ``scripts/demo.sh`` runs to its end.

The demo works on this repository's own files, so a file that grows can break
its story (an add meant to evict that is refused, or that evicts nothing).
Search by meaning is off here: the demo's ``--wait`` would wait for the model.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.cli.conftest import find_executable

DEMO = Path(__file__).resolve().parents[2] / "scripts" / "demo.sh"


def test_the_demo_tells_its_whole_story() -> None:
    env = {**os.environ, "CONTEXTLS": find_executable(), "CONTEXTLS_SEMANTIC": "off"}
    done = subprocess.run(
        ["bash", str(DEMO)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # in order: evictions are reported on stderr
        text=True,
        timeout=120,
        check=False,
    )
    said = done.stdout
    assert done.returncode == 0, said
    # The directory is refused, the glob is refused, then --force adds it and evicts.
    assert "nothing was added" in said
    forced = said.split(".py --force\n", 1)[1].split("$ contextls", 1)[0]
    assert forced.count("added ctx-") >= 2, forced
    assert "evicted" in forced and "to the archive" in forced, forced
    assert "\nrestored ctx-" in said, said
