"""The wire: framed JSON requests and replies, the loop that serves them, the host's log.

Both doors of the host speak it: the native-messaging host Chrome starts
(``trimtab.native``, on stdin/stdout) and the link outside agents reach
(``trimtab.link``, on a per-user socket).

`_framing` is the sans-I/O wire format (a 4-byte native-endian length and UTF-8 JSON;
replies over Chrome's 1 MB limit are chunked); `_server` reads requests, runs each in
its own task and writes replies through one `Outbox`; `_logging` writes the host's
log file (stdout is the protocol channel and carries nothing else). Beside them, what
the host's processes share below every floor: `loads_json` (JSON off the wire, fast),
`gc_paused` and `collect_less_often` (the garbage collector around large steps),
`unwrap_group` (one error out of a nursery's group), and `seconds_setting` and
`count_setting` (the host's settings from its environment, read one way).

Imports nothing of the host, nor the CDP layer: it is the floor under both.
"""

from ._framing import (
    DEFAULT_CHUNK_THRESHOLD,
    MAX_INCOMING_FRAME,
    MAX_OUTGOING_FRAME,
    ChunkAssembler,
    ChunkError,
    DecodedMessage,
    ErrorCode,
    FrameDecoder,
    FrameError,
    JSONObject,
    RequestId,
    encode_frame,
    encode_json,
    encode_reply_frames,
)
from ._gc import YOUNG_THRESHOLD, collect_less_often, gc_paused
from ._groups import unwrap_group
from ._json import loads_json
from ._logging import LOG_FILE_NAME, configure_logging, default_log_dir
from ._server import (
    DEFAULT_EOF_GRACE,
    ERROR_CODES,
    RELAY_MESSAGE_TYPES,
    Handler,
    HostServer,
    HostStatistics,
    Outbox,
    OutboxClosed,
    RelayHook,
    Request,
    RequestError,
    host_version,
)
from ._settings import count_setting, seconds_setting

__all__ = [
    "DEFAULT_CHUNK_THRESHOLD",
    "DEFAULT_EOF_GRACE",
    "ERROR_CODES",
    "LOG_FILE_NAME",
    "MAX_INCOMING_FRAME",
    "MAX_OUTGOING_FRAME",
    "RELAY_MESSAGE_TYPES",
    "YOUNG_THRESHOLD",
    "ChunkAssembler",
    "ChunkError",
    "DecodedMessage",
    "ErrorCode",
    "FrameDecoder",
    "FrameError",
    "Handler",
    "HostServer",
    "HostStatistics",
    "JSONObject",
    "Outbox",
    "OutboxClosed",
    "RelayHook",
    "Request",
    "RequestError",
    "RequestId",
    "collect_less_often",
    "configure_logging",
    "count_setting",
    "default_log_dir",
    "encode_frame",
    "encode_json",
    "encode_reply_frames",
    "gc_paused",
    "host_version",
    "loads_json",
    "seconds_setting",
    "unwrap_group",
]
