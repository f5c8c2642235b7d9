"""Trimtab's host: the native-messaging host, snapshots, tools and the call tracker.

The folder is ``host/`` (the layout of DESIGN.md); the package imports as ``trimtab``.
Its parts, in the order data flows through them:

* `trimtab.native`: the process Chrome starts (framing, server, request handlers);
* `trimtab.tab`: one tab as the agent sees it (snapshots, diffs, page revisions, settle);
* `trimtab.tools`: the agent's tools and their catalogue;
* `trimtab.tracker`: repeated tool calls answered from cache;
* `trimtab.pipeline`: a captured page in, compact XML out.

`trimtab.link` is the host's endpoint for agents outside the browser, which
`trimtab.mcp` (``trimtab mcp``) and `trimtab.cli` (``tabs``, ``snapshot``, ``call``,
``doctor``) connect to. The command line (`trimtab.cli`) sits on top, with the
installer (`trimtab.install`) beside it. CDP and the page model are in `pycdp_bridge`.
"""

from .tab import PageChangedError, Snapshot, SnapshotMemory, SnapshotOptions, TrimLimits
from .tracker import (
    CallTracker,
    ToolPolicy,
    TrackedResult,
    TrackerLimits,
    TrackerStatistics,
)
from .wire import (
    MAX_INCOMING_FRAME,
    ChunkAssembler,
    FrameDecoder,
    HostServer,
    Outbox,
    Request,
    RequestError,
    encode_frame,
    encode_reply_frames,
)

__all__ = [
    "MAX_INCOMING_FRAME",
    "CallTracker",
    "ChunkAssembler",
    "FrameDecoder",
    "HostServer",
    "Outbox",
    "PageChangedError",
    "Request",
    "RequestError",
    "Snapshot",
    "SnapshotMemory",
    "SnapshotOptions",
    "ToolPolicy",
    "TrackedResult",
    "TrackerLimits",
    "TrackerStatistics",
    "TrimLimits",
    "encode_frame",
    "encode_reply_frames",
]
