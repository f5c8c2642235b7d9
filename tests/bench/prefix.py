"""``--only prefix``: the tokens every model call pays before the conversation, per group.

Two clients send a fixed prefix with every model call: ``trimtab mcp`` (its
instructions and its tools' JSON, as the ``mcp`` SDK's client receives them from the
server in this process) and the side panel's agent (its system prompt and its tools
as the Anthropic request carries them, built by the extension's own code under node).
Both are measured with the core tools alone and with each group added, from the
catalogue as it is (a tool another group gains is counted without touching this
file), and ``trimtab mcp``'s own group (``routines``) likewise; the side panel has no
routine tools. Tokens are o200k_base.

``prefix_core`` is the whole prefix with the core tools only; ``prefix_pixels``,
``prefix_devtools`` and ``prefix_routines`` what each group adds to it (MCP server;
``panel_*`` the same for the side panel).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Sequence
from typing import Any, Final

import trio
from mcp import Client

from tests.bench import REPO
from trimtab.mcp import build_server, open_holder
from trimtab.pipeline import count_tokens
from trimtab.tools import MCP_GROUPS, TOOL_GROUPS, tools_in

__all__ = ["run"]

# The side panel's prefix, built by the extension's modules: the system prompt for the
# host's format page, and the tools as the Anthropic request lists them.
_PANEL_JS: Final = """
const { systemPrompt } = await import("./extension/agent/agent.js");
const { anthropicBody } = await import("./extension/agent/requests.js");
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const system = systemPrompt({ format: input.format });
const body = anthropicBody({ model: "m", maxTokens: 1, system, tools: input.tools, history: [] });
process.stdout.write(JSON.stringify({ system, tools: JSON.stringify(body.tools ?? []) }));
"""


def _format_page() -> str:
    return (REPO / "host" / "FORMAT.md").read_text(encoding="utf-8")


async def _mcp_prefix(groups: Sequence[str]) -> tuple[int, int]:
    """Tokens of ``trimtab mcp``'s instructions and of its tools' JSON."""
    async with open_holder() as holder, Client(build_server(holder, groups)) as client:
        tools = (await client.list_tools()).tools
        listed = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]
        # As JSON.stringify writes it: no spaces after separators.
        instructions = client.instructions or ""
    compact = json.dumps(listed, ensure_ascii=False, separators=(",", ":"))
    return count_tokens(instructions), count_tokens(compact)


def _panel_prefix(groups: Sequence[str]) -> tuple[int, int]:
    """Tokens of the side panel's system prompt and of its tools in the request."""
    tools = [
        {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}
        for spec in tools_in(groups)
    ]
    done = subprocess.run(
        ["node", "--input-type=commonjs", "-e", f"(async () => {{{_PANEL_JS}}})()"],
        input=json.dumps({"format": _format_page(), "tools": tools}),
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
        timeout=60,
    )
    built = json.loads(done.stdout)
    return count_tokens(built["system"]), count_tokens(built["tools"])


def run(pages: str | None, out: Callable[[str], None]) -> dict[str, Any]:
    del pages  # no corpus: the prefix is the same on every page
    chosen: list[tuple[str, tuple[str, ...]]] = [("core", ("core",))]
    chosen += [(group, ("core", group)) for group in MCP_GROUPS if group != "core"]
    chosen.append(("all", MCP_GROUPS))
    figures: dict[str, dict[str, Any]] = {}
    for name, groups in chosen:
        mcp_text, mcp_tools = trio.run(_mcp_prefix, groups)
        panel_text, panel_tools = _panel_prefix(groups)
        names = [spec.name for spec in tools_in(groups)]  # the catalogue's
        figures[name] = {
            "tools": len(names),
            "mcp": {"instructions": mcp_text, "tools": mcp_tools, "total": mcp_text + mcp_tools},
            "panel": {
                "system": panel_text,
                "tools": panel_tools,
                "total": panel_text + panel_tools,
            },
        }
        out(
            f"{name:>8}: {len(names):2d} catalogue tools; trimtab mcp {mcp_text} + {mcp_tools} = "
            f"{mcp_text + mcp_tools} tokens; side panel {panel_text} + {panel_tools} = "
            f"{panel_text + panel_tools} tokens"
        )
    core = figures["core"]

    def added(client: str, group: str) -> int:
        return int(figures[group][client]["total"] - core[client]["total"])

    extra = [group for group in MCP_GROUPS if group != "core"]
    out(
        "SUMMARY "
        + " ".join(
            [f"prefix_core={core['mcp']['total']}"]
            + [f"prefix_{group}={added('mcp', group)}" for group in extra]
            + [f"panel_core={core['panel']['total']}"]
            + [f"panel_{group}={added('panel', group)}" for group in TOOL_GROUPS[1:]]
        )
    )
    return figures
