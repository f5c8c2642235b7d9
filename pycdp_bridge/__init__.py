"""CDP for Trimtab: one async `Target` interface over two transports, and the capture.

* `launch_browser` / `Browser` / `PageTarget`: a Chromium Trimtab starts itself,
  spoken to over ``--remote-debugging-pipe`` (the CLI, tests and benchmarks).
* `RelayHub`: the same `Target` over the extension's ``chrome.debugger`` relay, and
  the tabs the extension reports opened and closed (`TabEvent`).
* `capture`: one tab's DOM, layout and accessibility tree joined into a `PageModel`;
  `layout_boxes`: where each element's box is now (a screenshot's marks).
* `protocol`: the CDP command generators every caller passes to `Target.execute`
  (the only place that names CDP methods), and ``protocol.events``, the event names.
* `evaluate` / `call_on`: the page's JavaScript, whose exceptions are JavaScriptError.
* `gc_paused`: the collector off over one large synchronous step (a reply's JSON);
  `collect_less_often`: fewer collections in a process that takes snapshots.

Imports nothing of the host (``trimtab``): the host is built on it, never the reverse.
"""

from . import _protocol as protocol
from ._capture import AXMode, capture, layout_boxes
from ._connection import CDPConnection, Event
from ._direct import Browser, OpenedPage, PageTarget
from ._errors import (
    BrowserNotFoundError,
    CDPError,
    DialogOpenError,
    JavaScriptError,
    NavigationError,
    PageCrashedError,
    TargetClosedError,
)
from ._javascript import ObjectRef, call_on, evaluate
from ._launcher import find_browser, launch_browser
from ._model import AXInfo, Frame, Node, NodeType, PageModel, Rect, Style
from ._relay import MessageHandler, RelayHub, RelayTarget, SendMessage
from ._target import Target

__all__ = [
    "AXInfo",
    "AXMode",
    "Browser",
    "BrowserNotFoundError",
    "CDPConnection",
    "CDPError",
    "DialogOpenError",
    "Event",
    "Frame",
    "JavaScriptError",
    "MessageHandler",
    "NavigationError",
    "Node",
    "NodeType",
    "ObjectRef",
    "OpenedPage",
    "PageCrashedError",
    "PageModel",
    "PageTarget",
    "Rect",
    "RelayHub",
    "RelayTarget",
    "SendMessage",
    "Style",
    "Target",
    "TargetClosedError",
    "call_on",
    "capture",
    "evaluate",
    "find_browser",
    "launch_browser",
    "layout_boxes",
    "protocol",
]
