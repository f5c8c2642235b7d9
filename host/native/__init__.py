"""The native-messaging host: the process Chrome starts for the extension.

`_framing` is the sans-I/O wire format (4-byte length + UTF-8 JSON, chunked replies),
`_server` reads requests, runs their handlers concurrently and writes replies,
`_handlers` answers the extension's request types (snapshot, tools, tool, highlight,
release) with one `trimtab.tab.SnapshotMemory` per tab, and `_main` is the
``trimtab-host`` entry point (descriptors, logging, the relay).

May import every other part of the host; nothing imports it but the command line.
"""

from ._framing import (
    MAX_INCOMING_FRAME,
    ChunkAssembler,
    ErrorCode,
    FrameDecoder,
    JSONObject,
    encode_frame,
    encode_reply_frames,
)
from ._handlers import ConsentBook, HostState, Toolbox, ToolCall, open_host_state, read_format_page
from ._main import HostContext, HostSetup, build_setup, main, run_host
from ._server import Handler, HostServer, Outbox, Request, RequestError

__all__ = [
    "MAX_INCOMING_FRAME",
    "ChunkAssembler",
    "ConsentBook",
    "ErrorCode",
    "FrameDecoder",
    "Handler",
    "HostContext",
    "HostServer",
    "HostSetup",
    "HostState",
    "JSONObject",
    "Outbox",
    "Request",
    "RequestError",
    "ToolCall",
    "Toolbox",
    "build_setup",
    "encode_frame",
    "encode_reply_frames",
    "main",
    "open_host_state",
    "read_format_page",
    "run_host",
]
