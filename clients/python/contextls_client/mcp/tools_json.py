"""Write ``tools.json``: the tool list as the SDK gives it, for ``early`` to answer the
first ``tools/list`` with while the SDK loads.

    python -m contextls_client.mcp.tools_json            # write it
    python -m contextls_client.mcp.tools_json --check    # exit 1 if it is stale

The SDK's own answer is compared with it at every start (``stdio.HeldBackOutput``), and
the tests fail on a difference.
"""

from __future__ import annotations

import argparse
import json
import sys

from contextls_client.mcp.early import TOOLS_JSON
from contextls_client.mcp.server import mcp_tool
from contextls_client.mcp.tools import TOOLS


def render() -> str:
    tools = [
        mcp_tool(tool).model_dump(by_alias=True, mode="json", exclude_none=True) for tool in TOOLS
    ]
    return json.dumps(tools, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the file is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        with open(TOOLS_JSON, encoding="utf-8") as file:
            current = file.read()
        if current != text:
            print(f"{TOOLS_JSON} is stale: run `python -m contextls_client.mcp.tools_json`",
                  file=sys.stderr)  # fmt: skip
            return 1
        return 0
    with open(TOOLS_JSON, "w", encoding="utf-8") as file:
        file.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
