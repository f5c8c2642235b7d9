"""CDP, and only CDP: commands, two transports behind one `Target`, and the capture.

* `protocol`: every CDP command Trimtab sends, one table of generators passed to
  `Target.execute` (the only place that names CDP methods), and ``protocol.events``,
  the event names. A table by hand rather than code generated from the protocol's
  JSON: a generator would still need this table beside it (which commands, Trimtab's
  defaults and checks), and ``cdp-use`` already gives the types.
* Transports: `launch_browser` / `Browser` / `PageTarget`, a Chromium Trimtab starts
  itself (with `browser_args`), spoken to over ``--remote-debugging-pipe`` (the CLI,
  tests and benchmarks);
  `RelayHub` / `RelayTarget`, the same `Target` over the extension's
  ``chrome.debugger`` relay. The extension's other messages on that port (tabs, gates)
  are the host's: a `RelayHub` is given their handlers (``trimtab.browser``).
* `evaluate` / `call_on`: the page's JavaScript, whose exceptions are JavaScriptError.
* `traced_commands`: a diagnostic, every command a block of work sent and how long it
  waited (`SentCommand`; `off_the_path` marks what it does not wait for, `note_wait`
  a wait that is no command), for breakdowns of where an action's time goes.
* `capture`: one tab's DOM, layout and accessibility tree joined into a `PageModel`
  (`Node`, `Rect`, ...); `layout_boxes`: where each element's box is now. The model is
  built here, not by the pipeline that reads it, because the capture decodes the
  replies as they arrive to decide what to ask next (a snapshot with shadow roots
  needs ``DOM.getDocument``; the decoded states choose the nodes whose accessibility
  is asked; frame owners need their box models) and joins them while its last request
  is in flight; raw replies handed on would move those CDP calls out of the CDP layer
  or decode twice. The pipeline reads the model and never speaks CDP.

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
from ._launcher import browser_args, browser_env, find_browser, launch_browser
from ._model import AXInfo, Frame, Node, NodeType, PageModel, Rect, Style
from ._relay import MessageHandler, RelayHub, RelayTarget, SendMessage
from ._target import Target
from ._trace import SentCommand, note_wait, off_the_path, tally, traced_commands

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
    "SentCommand",
    "Style",
    "Target",
    "TargetClosedError",
    "browser_args",
    "browser_env",
    "call_on",
    "capture",
    "evaluate",
    "find_browser",
    "launch_browser",
    "layout_boxes",
    "note_wait",
    "off_the_path",
    "protocol",
    "tally",
    "traced_commands",
]
