"""``trimtab mcp``: an MCP server on standard input/output for agents outside the browser.

It offers the host's tool catalogue (``trimtab.tools.TOOLS``, the same names,
descriptions and schemas) with a ``tab`` argument, cut to the groups ``--tools``
names (every group by default; a call to a tool of another group is refused, saying
how to add it), plus ``tabs`` (the tabs the person shared with agents) and, in its own
group ``routines``, `_routines`' tools (list, run and save the person's routines), and
relays each call over the link (``trimtab.link``) to the host Chrome started; results
are the host's XML, in the link's untrusted block.
``FORMAT.md`` is the server's instructions and the resource ``trimtab://format``.

Built on the official ``mcp`` SDK, run under trio through anyio; `_stdio` carries
the bytes (one message a line, bounded, malformed lines answered with a JSON-RPC
error) and the SDK's `stdio_server` the session; `_arguments` reads the ``tab`` a call
names and re-exports the catalogue's check of the other arguments against the tool's
schema (``trimtab.tools``; ``trimtab call`` and the link check them the same way).

May import ``trimtab.link``, ``trimtab.tools`` (the catalogue only), ``trimtab.wire``
(the host's version) and the format page (a file of the package); nothing in the host
imports it.
"""

from ._arguments import ArgumentError, check_arguments, property_types, tab_id
from ._server import FORMAT_URI, LinkHolder, build_server, open_holder, run_stdio

__all__ = [
    "FORMAT_URI",
    "ArgumentError",
    "LinkHolder",
    "build_server",
    "check_arguments",
    "open_holder",
    "property_types",
    "run_stdio",
    "tab_id",
]
