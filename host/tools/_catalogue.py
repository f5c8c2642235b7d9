"""The catalogue: every tool in the order the model reads them, and `run_tool`.

Every tool runs over the tab's `pycdp_bridge.Target`, so it works the same through
the extension's relay and the direct transport. Actions use trusted input (the mouse
at a point of the element that the browser's hit test gives to it, the keyboard),
wait for the page to settle, and answer with a snapshot: a diff when the document
stayed, a baseline when the action left it. A tool never acts on another element
than the one asked for: stale ids, covered, hidden, disabled or read-only elements
are refused with a message for the model (`ToolResult.is_error`).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import trio

from pycdp_bridge import (
    CDPError,
    DialogOpenError,
    Event,
    JavaScriptError,
    PageCrashedError,
    TargetClosedError,
)
from pycdp_bridge import protocol as cdp

from ..driver import CallContext, ConsentNeeded
from ..pipeline import xml
from ..tab import Guarding, PageChangedError, Tab
from . import (
    _actions,
    _devtools,
    _dialogs,
    _evaluate,
    _fill,
    _navigation,
    _pixels,
    _pointer,
    _queries,
    _tabs,
)
from ._common import (
    ACTION_TIMEOUT,
    BadArguments,
    Handler,
    Refusal,
    Tool,
    ToolResult,
    ToolSpec,
    error,
)

__all__ = ["TOOLS", "run_tool", "tool_spec"]

_CATALOGUE: tuple[Tool, ...] = (
    _navigation.navigate,
    _navigation.back,
    _navigation.forward,
    _navigation.reload,
    _navigation.capture_snapshot,
    _dialogs.answer_dialog,
    _actions.click,
    _pointer.double_click,
    _actions.type_text,
    _actions.press,
    _actions.select,
    _actions.check,
    _actions.hover,
    _pointer.drag,
    _pointer.select_text,
    _pointer.upload,
    _actions.scroll,
    _queries.find,
    _queries.expand,
    _queries.read,
    _queries.wait_for,
    # devtools
    _devtools.console,
    _devtools.network,
    _evaluate.evaluate,
    _fill.fill,
    # pixels
    _pixels.screenshot,
    # a task's tabs
    _tabs.tabs,
    _tabs.switch_tab,
    _tabs.new_tab,
    _tabs.close_tab,
)

TOOLS: tuple[ToolSpec, ...] = tuple(entry.spec for entry in _CATALOGUE)

# Actions that decide their own consent (`CallContext.require` before their first input),
# and actions that never submit or commit anything. Any other action, a tool added
# later included, asks first: unknown means ask.
_DECIDES_CONSENT = frozenset(
    {"click", "type", "press", "select", "check", "answer_dialog", "double_click", "drag"}
    | {"evaluate", "fill"}
)
_NEVER_COMMITS = frozenset(
    {"navigate", "back", "forward", "reload", "hover", "scroll", "select_text"}
)
# The task's tabs: the host runs them, and opening a tab passes the site rules.
_NEVER_COMMITS |= _tabs.TASK_TOOLS
# How the browser says a navigation came from a form (`Page.frameRequestedNavigation`).
_FORM_NAVIGATIONS = frozenset({"formSubmissionGet", "formSubmissionPost"})
_BY_NAME: Mapping[str, Tool] = {entry.spec.name: entry for entry in _CATALOGUE}


def may_commit(spec: ToolSpec) -> bool:
    """Whether a call of this tool may submit or commit something (and so may ask the
    person first): every action except those that never commit, unknown ones included."""
    return spec.policy.side_effects and spec.name not in _NEVER_COMMITS


def tool_spec(name: str) -> ToolSpec:
    """The spec of the tool called `name`; KeyError naming the known tools otherwise."""
    try:
        return _BY_NAME[name].spec
    except KeyError:
        known = ", ".join(_BY_NAME)
        raise KeyError(f"unknown tool {name!r}; the tools are {known}") from None


async def run_tool(
    tab: Tab,
    name: str,
    args: Mapping[str, object],
    *,
    consented: bool = False,
    guard: Guarding | None = None,
) -> ToolResult:
    """Run one tool on a tab; refusals and a closed tab come back as `is_error` results.

    This is where a call's context (`CallContext`) is made, for this one call: an
    action that may submit or commit something, or whose spec says it
    `needs_consent` (`upload`), runs only when the person said yes to it
    (``consented``): otherwise nothing is done and the result says why
    (`ToolResult.consent`), for the caller to ask and run the call again. ``guard``:
    the call's request guard (the browser's; None: nothing the page sends is held).

    Raises KeyError for an unknown tool name; every browser or page failure (CDPError)
    comes back as an `is_error` result with a plain message.
    """
    spec = tool_spec(name)
    handler = _BY_NAME[name].run
    if tab.target.crashed and name not in _navigation.REVIVING:
        # Not even the latest snapshot stands for the page any more.
        tab.forget()
        return _crashed(name)
    dialog = tab.target.open_dialog
    if dialog is not None and name != "answer_dialog":
        # Nothing was done: the page answers nothing until the dialog is answered.
        return _dialogs.dialog_result(DialogOpenError.of(name, dialog), is_error=True)
    call = CallContext(tab, consented=consented, guard=guard)
    # The remote objects the call creates are released when it ends (or by
    # `after_action`, alongside its snapshot). A form the browser saw go during a call
    # that ran is reported whatever it answers, an error included: a navigation that
    # broke the action's last steps is the very one that submitted the form.
    async with (
        call.objects(),
        tab.target.listen(cdp.events.PAGE_FRAME_REQUESTED_NAVIGATION) as navigations,
    ):
        answer = await _run(call, name, spec, handler, args)
        submitted = _form_navigation(navigations)
    ran = answer.consent is None
    return attrs.evolve(answer, submitted=True) if submitted and ran else answer


def _too_slow(name: str, spec: ToolSpec) -> str:
    """What a call stopped at the tools' time limit says: the page stopped answering,
    and, for an action, that it may have acted before it stopped (a click whose
    handler never returns did land), so the model looks before it tries again."""
    said = (
        f"{name} did not finish within {ACTION_TIMEOUT:g} s: the page stopped answering "
        "(a script on it may be stuck, or the page is too big to read on a busy machine); "
    )
    if spec.policy.side_effects:
        return said + "it may have acted before it stopped: take a snapshot before trying again"
    return said + "nothing was done; take a snapshot later, or reload the page"


def _crashed(name: str) -> ToolResult:
    return error(
        f"{name} failed: the page crashed (its renderer process died); "
        "navigate(url) or reload() brings the tab back"
    )


async def _run(
    call: CallContext, name: str, spec: ToolSpec, handler: Handler, args: Mapping[str, object]
) -> ToolResult:
    tab = call.tab
    try:
        if spec.needs_consent is not None:
            call.require(spec.needs_consent)
        elif spec.policy.side_effects and name not in _DECIDES_CONSENT | _NEVER_COMMITS:
            call.require(f"Trimtab cannot tell whether {name} submits or commits something")
        # The time the person takes to answer about a held request does not count.
        with trio.fail_after(ACTION_TIMEOUT) as limit, call.waits_for_judge(limit):
            return await handler(call, args)
    except ConsentNeeded as exc:
        # Nothing was done: the caller asks the person and runs the call again.
        return attrs.evolve(
            error(f"{name} was not run: it needs the person's consent ({exc.reason})"),
            consent=exc.reason,
            element=exc.element,
            element_id=exc.eid,
            consent_what=exc.what,
            consent_form=exc.form,
        )
    except Refusal as exc:
        return error(str(exc))
    except BadArguments as exc:
        # Trimtab's words about the call's own arguments: no page text to fence off.
        return attrs.evolve(error(f"bad arguments for {name}: {exc}"), quotes_page=False)
    except DialogOpenError as exc:
        # The action ran and the page answered it with a dialog: that is its result.
        return _dialogs.dialog_result(exc, is_error=False)
    except PageCrashedError:
        tab.forget()
        return _crashed(name)
    except TargetClosedError as exc:
        tab.forget()
        return error(
            f"{name} failed: the tab closed or stopped being debugged ({exc.reason}); "
            "nothing more can be done in it"
        )
    except PageChangedError as exc:
        return error(f"{name}: {xml.text(str(exc))}")
    except trio.TooSlowError:
        call.page_stopped = True
        return error(_too_slow(name, spec))
    except JavaScriptError as exc:
        # Our page-side code met a page it did not expect (a patched prototype, a
        # document going away): nothing more was done.
        return error(f"{name} stopped: {exc.description}; nothing more was done; take a snapshot")
    except CDPError as exc:
        if "node" in exc.message.lower() or "context" in exc.message.lower():
            # The element or its document went away between two steps: the page changed.
            return error(
                f"{name} stopped: the page changed while acting ({xml.text(exc.message)}); "
                "nothing more was done; take a snapshot"
            )
        # Whatever else the browser or the page refused: a result, never an exception.
        return error(
            f"{name} failed: the browser refused a step ({exc.message}); nothing more "
            "was done; take a snapshot to see the page as it is"
        )


def _form_navigation(navigations: trio.MemoryReceiveChannel[Event]) -> bool:
    """Whether the browser reported a navigation that a form submission started."""
    found = False
    while True:
        try:
            event = navigations.receive_nowait()
        except (trio.WouldBlock, trio.EndOfChannel):
            return found
        if event.params.get("reason") in _FORM_NAVIGATIONS:
            found = True
