"""The native-messaging host: what the process Chrome starts answers the extension.

`_framing` is the sans-I/O wire format (4-byte length + UTF-8 JSON, chunked replies),
`_server` reads requests, runs their handlers concurrently and writes replies,
`_handlers` answers the extension's request types (snapshot, tools, tool, highlight,
release) with one `trimtab.tab.Tab` per browser tab, `_consent_book` keeps the
person's one-time consents, `_logging` writes the host's log. The ``trimtab-host``
entry point that wires it to stdio and to the outside agents' link is
``trimtab._host``.

May import `trimtab.tab`, `trimtab.tools`, `trimtab.tracker`, `trimtab.pipeline`.
"""

from ._consent_book import ConsentBook, ToolCall
from ._framing import (
    MAX_INCOMING_FRAME,
    ChunkAssembler,
    ErrorCode,
    FrameDecoder,
    JSONObject,
    encode_frame,
    encode_reply_frames,
)
from ._handlers import HostState, Toolbox, open_host_state, read_format_page
from ._server import Handler, HostServer, Outbox, Request, RequestError

__all__ = [
    "MAX_INCOMING_FRAME",
    "ChunkAssembler",
    "ConsentBook",
    "ErrorCode",
    "FrameDecoder",
    "Handler",
    "HostServer",
    "HostState",
    "JSONObject",
    "Outbox",
    "Request",
    "RequestError",
    "ToolCall",
    "Toolbox",
    "encode_frame",
    "encode_reply_frames",
    "open_host_state",
    "read_format_page",
]
