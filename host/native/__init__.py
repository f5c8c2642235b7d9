"""The native-messaging host: what the process Chrome starts answers the extension.

It is one of the two doors on `trimtab.wire` (the link is the other).
`_handlers` answers the extension's request types (snapshot, tools, tool, highlight,
release) with one `trimtab.tab.Tab` per browser tab, `_consent_book` keeps the
person's one-time consents. The ``trimtab-host``
entry point that wires it to stdio and to the outside agents' link is
``trimtab._host``.

May import `trimtab.wire`, `trimtab.tab`, `trimtab.tools`, `trimtab.tracker`, `trimtab.pipeline`.
"""

from ._consent_book import ConsentBook, ToolCall
from ._handlers import HostState, Toolbox, open_host_state, read_format_page

__all__ = [
    "ConsentBook",
    "HostState",
    "ToolCall",
    "Toolbox",
    "open_host_state",
    "read_format_page",
]
