"""What ``trimtab install`` tells a person to do once the host is registered."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Final

from ._manifests import EXTENSION_DIR, console_script

__all__ = ["next_steps"]

# Where each browser lists its extensions (Chrome's page for the others).
_EXTENSION_PAGES: Final = {
    "edge": "edge://extensions",
    "brave": "brave://extensions",
    "vivaldi": "vivaldi://extensions",
}


def next_steps(
    browser: str | None = None,
    *,
    extension_dir: Path = EXTENSION_DIR,
    trimtab: Path | None = None,
) -> str:
    """The steps after the host is registered for ``browser`` (any when None): load the
    extension from ``extension_dir``, share a tab, and add ``trimtab`` (this
    environment's command by default) to an MCP client."""
    command = trimtab or console_script("trimtab")
    page = _EXTENSION_PAGES.get(browser or "", "chrome://extensions")
    config = {"mcpServers": {"trimtab": {"command": str(command), "args": ["mcp"]}}}
    return "\n".join(
        [
            "Next steps:",
            f"1. Load the extension: open {page}, switch on Developer mode, click "
            f"Load unpacked and choose {extension_dir}",
            "2. Share a tab: click the Trimtab toolbar button to open the side panel, then "
            '"Share this tab with agents". Keep the side panel open while an agent works: '
            "its questions (other tabs, submitting a form) are asked there.",
            "3. Add Trimtab to an MCP client, e.g. Claude Code:",
            f"     claude mcp add trimtab -- {shlex.quote(str(command))} mcp",
            "   or a JSON configuration (Claude Desktop, Cursor):",
            f"     {json.dumps(config)}",
            f"   From a shell: {shlex.quote(str(command))} tabs",
            f"4. Check the set-up: {shlex.quote(str(command))} doctor",
        ]
    )
