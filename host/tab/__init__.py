"""One tab as the agent sees it: snapshots, memory, revisions, settling, the request guard.

`Tab` is one tab: its CDP target, its `SnapshotMemory` (what the model last saw: the
baseline regions, the latest compaction and the eids it issued, from which each new
capture is rendered as a baseline or a diff, a `Snapshot`), and its `PageRevisions`,
the single page observer (in an isolated world) that tells the call tracker what the
page changed on its own and tells `settle` when an action's effect is in. While an
action and its settle run, `watch` holds what the page sends for the request guard
the call hands it (`Guarding`; `Activity.guard` carries it to `settle`), whose judge
the browser builds on the envelope's decision; a document response the browser would
save as a file is held as a download, so is a file the page makes by script
(`guard_downloads`: held in the run's own folder where the host knows the browser's
downloads folder, else held by the extension and offered to the action,
`HeldDownload`), and `Downloads` keeps what became of each.
After an action that typed or clicked, the guard stays on for a trailing window
(`Trailing`, `TRAILING_SECONDS`) that ends at the tab's next action, or at once with
`end_trailing` (Stop).
`DevtoolsLog` keeps the tab's console messages and requests, bounded, for the devtools
tools (each view of the tab reads it from its own `LogRead` on). `page_script` reads the
page-side scripts of this package's ``js/`` folder and of
`trimtab.driver`'s and `trimtab.tools`' (one function or expression a file), with the helpers of
``js/helpers.js`` each asks for.

May import `pycdp_bridge` and `trimtab.pipeline`; nothing else of the host.
"""

from ._budget import DEFAULT_BUDGET, MIN_BUDGET, check_budget
from ._capture import PageChangedError
from ._devtools import (
    BODY_KEPT,
    CONSOLE_KEPT,
    REQUESTS_KEPT,
    ConsoleMessage,
    DevtoolsLog,
    LogRead,
    NetworkRequest,
)
from ._download_guard import refuse_unclaimed
from ._downloads import (
    DOWNLOAD_WAIT,
    HELD_FOLDER,
    Download,
    DownloadFile,
    Downloads,
    HeldDownload,
    download_file,
    held_download,
)
from ._guard import (
    GUARDED_TYPES,
    Guarding,
    Held,
    Judge,
    OpenedTab,
    PausedRequest,
    Ruling,
    deadline_waits_for_judge,
    guard_opened,
    judge_kept_document,
    refusing_all,
)
from ._page_text import page_token_counts
from ._revisions import PageRevisions, RevisionStatistics, main_frame_id
from ._scripts import page_script
from ._settle import (
    ACTIVITY_EVENTS,
    QUIET_MS,
    Activity,
    Ahead,
    Scope,
    rendered,
    settle,
    watch,
)
from ._snapshots import RenderedAhead, SnapshotMemory
from ._tab import Tab
from ._trailing import TRAILING_SECONDS, Trailing, end_trailing, trailing_windows
from ._values import Snapshot, SnapshotOptions, TrimLimits

__all__ = [
    "ACTIVITY_EVENTS",
    "BODY_KEPT",
    "CONSOLE_KEPT",
    "DEFAULT_BUDGET",
    "DOWNLOAD_WAIT",
    "GUARDED_TYPES",
    "HELD_FOLDER",
    "MIN_BUDGET",
    "QUIET_MS",
    "REQUESTS_KEPT",
    "TRAILING_SECONDS",
    "Activity",
    "Ahead",
    "ConsoleMessage",
    "DevtoolsLog",
    "Download",
    "DownloadFile",
    "Downloads",
    "Guarding",
    "Held",
    "HeldDownload",
    "Judge",
    "LogRead",
    "NetworkRequest",
    "OpenedTab",
    "PageChangedError",
    "PageRevisions",
    "PausedRequest",
    "RenderedAhead",
    "RevisionStatistics",
    "Ruling",
    "Scope",
    "Snapshot",
    "SnapshotMemory",
    "SnapshotOptions",
    "Tab",
    "Trailing",
    "TrimLimits",
    "check_budget",
    "deadline_waits_for_judge",
    "download_file",
    "end_trailing",
    "guard_opened",
    "held_download",
    "judge_kept_document",
    "main_frame_id",
    "page_script",
    "page_token_counts",
    "refuse_unclaimed",
    "refusing_all",
    "rendered",
    "settle",
    "trailing_windows",
    "watch",
]
