"""Trimtab's host: the native-messaging host, snapshots, tools and the call tracker.

The folder is ``host/`` (the layout of DESIGN.md); the package imports as ``trimtab``.
The compaction pipeline is `trimtab.pipeline`; CDP and the page model are in
`pycdp_bridge`.
"""

from ._framing import (
    MAX_INCOMING_FRAME,
    ChunkAssembler,
    FrameDecoder,
    encode_frame,
    encode_reply_frames,
)
from ._server import HostServer, Outbox, Request, RequestError
from ._snapshots import PageChangedError, Snapshot, SnapshotOptions, TabSession, TrimLimits
from ._tracker import (
    CallTracker,
    ToolPolicy,
    TrackedResult,
    TrackerLimits,
    TrackerStatistics,
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
    "SnapshotOptions",
    "TabSession",
    "ToolPolicy",
    "TrackedResult",
    "TrackerLimits",
    "TrackerStatistics",
    "TrimLimits",
    "encode_frame",
    "encode_reply_frames",
]
