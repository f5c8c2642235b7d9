"""``trimtab mcp``: an MCP server on standard input/output for agents outside the browser.

It offers the host's tool catalogue (``trimtab.tools.TOOLS``, the same names,
descriptions and schemas) with a ``tab`` argument, plus ``tabs`` (the tabs the
person shared with agents), and relays each call over the link
(``trimtab.link``) to the host Chrome started; results are the host's XML.
``FORMAT.md`` is the server's instructions and the resource ``trimtab://format``.

Built on the official ``mcp`` SDK, run under trio through anyio; `_stdio` carries
the bytes (one message a line, bounded, malformed lines answered with a JSON-RPC
error) and the SDK's `stdio_server` the session. May import
``trimtab.link``, ``trimtab.tools`` (the catalogue only) and the format page;
nothing in the host imports it.
"""

from ._server import FORMAT_URI, LinkHolder, build_server, open_holder, run_stdio

__all__ = ["FORMAT_URI", "LinkHolder", "build_server", "open_holder", "run_stdio"]
