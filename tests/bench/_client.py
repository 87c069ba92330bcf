"""The benches' JSON-RPC client: the asyncio ``RpcClient`` of ``tests/support/rpc.py``.

The benches run as scripts from this folder, so the repository root goes on
the import path for ``tests.support``. What the client does to stay cheap per
message (frames parsed in the protocol callback, results decoded only when
asked, responses timestamped when their bytes are parsed) is described there.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.rpc import RpcClient

__all__ = ["RpcClient"]
