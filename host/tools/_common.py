"""What every tool module shares: specs, results, arguments, answers and time limits.

A tool is an async function ``(call, args) -> ToolResult`` wrapped by `tool`, which
puts its spec (name, description for the model, JSON schema, tracker policy) right
above its code; ``call`` is the live call (`trimtab.driver.CallContext`: its tab, the
person's yes, the request guard, the remote objects to release). The catalogue
(`_catalogue`) lists them in the order the model sees.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Literal, TypeAlias

import attrs

from pycdp_bridge import CDPError, Target
from pycdp_bridge import protocol as cdp

from ..driver import CallContext, ConsentKind, Located, PredictedForm, Refusal
from ..pipeline import xml
from ..tab import Activity, Scope, Snapshot
from ..tracker import ToolPolicy
from ._scripts import script

__all__ = [
    "ACT",
    "ACTION_TIMEOUT",
    "ID_SCHEMA",
    "NAVIGATION_TIMEOUT",
    "READS",
    "SETTLE_TIMEOUT",
    "TOOL_GROUPS",
    "BadArguments",
    "ConsentKind",
    "Handler",
    "Refusal",
    "Tool",
    "ToolGroup",
    "ToolImage",
    "ToolResult",
    "ToolSpec",
    "after_action",
    "bool_arg",
    "churned",
    "error",
    "id_arg",
    "result",
    "schema",
    "scope_of",
    "script",
    "text",
    "text_arg",
    "tool",
    "unsettled",
]

SETTLE_TIMEOUT = 5.0
"""Seconds an action waits for the page to settle before answering with what is there."""
NAVIGATION_TIMEOUT = 15.0
"""Seconds navigate/back/forward/reload wait for the page to load and settle."""
ACTION_TIMEOUT = 45.0
"""Seconds after which any tool gives up (a page frozen by a dialog, a hung renderer):
its answer, and the bounded waits on its way out, still reach a client that waits 60 s
for it (the MCP TypeScript SDK's default), which would otherwise say only that it timed
out, and not whether the action landed."""

# Which group a tool belongs to: a client sends the model the core tools and only the
# groups it enabled, since every tool's spec costs tokens on every model call.
ToolGroup: TypeAlias = Literal["core", "pixels", "devtools"]
TOOL_GROUPS: tuple[ToolGroup, ...] = ("core", "pixels", "devtools")


@attrs.frozen
class ToolSpec:
    """One tool as the model sees it, and how the call tracker treats it."""

    name: str
    description: str
    input_schema: Mapping[str, object]
    policy: ToolPolicy
    # Why every call needs the person's consent before it runs (`upload`: it hands the
    # page a local file), for the host's consent check; None: the tool decides per call.
    needs_consent: str | None = None
    group: ToolGroup = "core"
    # Whether its handler takes the task (its tabs), which only the host holds
    # (``trimtab.browser`` runs it); run on a bare tab, it says it needs the host.
    on_task: bool = False
    # Whether a door whose every call names its tab (MCP) offers it: not one whose
    # whole effect is which tab later calls act in, nor one the door answers itself.
    where_calls_name_a_tab: bool = True


@attrs.frozen
class ToolImage:
    """A picture a tool answers with (`screenshot`): encoded bytes, their type, size."""

    data: bytes = attrs.field(repr=lambda data: f"<{len(data)} bytes>")
    mime: str  # "image/jpeg" | "image/png"
    width: int
    height: int


@attrs.frozen
class ToolResult:
    """What a tool answers."""

    content: str
    is_error: bool = False
    kind: str = ""  # "baseline" | "diff" | "text"
    submits: bool = False  # predicted: the action was one that submits a form
    # The action needs the person's consent, for this reason; nothing was done.
    consent: str | None = None
    element: str | None = None  # what it would act on (escaped), when consent is asked
    element_id: str | None = None  # its id, when not the call's ``id`` (a `fill` field)
    # What the consent is about: only a submit's question may be waived by a setting.
    consent_what: ConsentKind = "submit"
    # Where the form it would submit goes, when the consent is about one Trimtab could read.
    consent_form: PredictedForm | None = None
    submitted: bool = False  # the browser saw a form submission during the action
    image: ToolImage | None = None  # the picture `content` describes (`screenshot`)
    # Whether `content` may hold the page's words, which every door shows only inside
    # the untrusted block; False for what is Trimtab's alone (arguments refused).
    quotes_page: bool = True


Handler = Callable[[CallContext, Mapping[str, object]], Awaitable[ToolResult]]


@attrs.frozen
class Tool:
    """A tool's spec and the code that runs it."""

    spec: ToolSpec
    run: Handler


def tool(
    name: str,
    description: str,
    input_schema: Mapping[str, object],
    policy: ToolPolicy,
    *,
    needs_consent: str | None = None,
    group: ToolGroup = "core",
    on_task: bool = False,
    where_calls_name_a_tab: bool = True,
) -> Callable[[Handler], Tool]:
    """Declare a tool: its spec, written right above the function that runs it."""

    def declare(handler: Handler) -> Tool:
        spec = ToolSpec(
            name,
            description,
            input_schema,
            policy,
            needs_consent=needs_consent,
            group=group,
            on_task=on_task,
            where_calls_name_a_tab=where_calls_name_a_tab,
        )
        return Tool(spec, handler)

    return declare


def scope_of(*elements: Located) -> Scope:
    """What `settle` watches for an action on these elements (see `settle`'s scope):
    those of the tab's own session, and the out-of-process iframes of the others."""
    return Scope(
        nodes=tuple(e.backend_id for e in elements if e.session is None),
        frames=tuple(dict.fromkeys(e.session for e in elements if e.session is not None)),
    )


# --- schemas and the phrases descriptions share ---------------------------------------

# What an id is, how actions answer and how they refuse are said once, in FORMAT.md,
# which the model reads beside the tools: descriptions say only what is the tool's own.
ID_SCHEMA: Mapping[str, object] = {"type": "string"}
ACT = ToolPolicy(side_effects=True)
READS = ToolPolicy(reads_page=True)


def schema(properties: Mapping[str, object], required: tuple[str, ...] = ()) -> dict[str, object]:
    """A JSON schema for a tool's arguments: an object with exactly these properties."""
    return {
        "type": "object",
        "properties": dict(properties),
        **({"required": list(required)} if required else {}),
        "additionalProperties": False,
    }


# --- arguments ----------------------------------------------------------------------------


class BadArguments(Exception):
    """The arguments do not fit the tool's schema. The message is Trimtab's words and
    the caller's values, never the page's: doors show it outside the untrusted block."""


def text_arg(args: Mapping[str, object], name: str, *, required: bool = True) -> str | None:
    """A string argument; None when it is optional and absent."""
    value = args.get(name)
    if value is None:
        if required:
            raise BadArguments(f"missing argument {name!r}")
        return None
    if not isinstance(value, str):
        raise BadArguments(f"argument {name!r} must be a string; got {value!r}")
    return value


def bool_arg(args: Mapping[str, object], name: str, default: bool) -> bool:
    """A boolean argument, `default` when absent."""
    value = args.get(name, default)
    if not isinstance(value, bool):
        raise BadArguments(f"argument {name!r} must be true or false; got {value!r}")
    return value


def id_arg(args: Mapping[str, object]) -> str:
    """The element id argument ``id``."""
    value = text_arg(args, "id")
    assert value is not None
    return value


# --- answers --------------------------------------------------------------------------------


def error(message: str) -> ToolResult:
    """A refusal or failure: nothing (more) was done."""
    return ToolResult(content=message, is_error=True, kind="text")


def text(message: str) -> ToolResult:
    """A plain answer that is not a snapshot."""
    return ToolResult(content=message, kind="text")


def result(snapshot: Snapshot, *, note: str | None = None, submits: bool = False) -> ToolResult:
    """A snapshot as the tool's answer, with Trimtab's `note` right after ``<page>``."""
    content = snapshot.xml
    if note:
        head, newline, rest = content.partition("\n")
        content = f"{head}{newline}{xml.element('note', content=note)}\n{rest}"
    return ToolResult(content=content, kind=snapshot.kind, submits=submits)


def unsettled(seconds: float) -> str:
    """The note of an answer taken before the page settled."""
    return (
        f"the page did not settle within {seconds:g} s (still loading or changing); "
        "this is how it looks now"
    )


def churned(activity: Activity) -> str | None:
    """The note that says what kept changing while the answer was awaited, if anything."""
    if not activity.churn:
        return None
    return (
        f"parts of the page kept changing meanwhile ({', '.join(activity.churn)}); "
        "this answered without waiting for them"
    )


async def bring_to_front(target: Target) -> None:
    """Make the tab the visible one again (a background tab's timers are throttled)."""
    with contextlib.suppress(CDPError):
        await target.execute(cdp.page_bring_to_front())


async def after_action(
    call: CallContext,
    activity: Activity,
    settled: bool,
    *,
    submits: bool = False,
    note: str | None = None,
) -> ToolResult:
    """The answer to an action once the page settled (or the wait ran out)."""
    notes = [n for n in (note, None if settled else unsettled(SETTLE_TIMEOUT)) if n]
    notes += [n for n in (churned(activity),) if n]
    if activity.opened:
        # `watch` brought the tab back to the front as the window opened, but the
        # browser may have switched to the new tab only after that: once more, now
        # that the page has settled, so the next action is not throttled either. The
        # host's answer says what became of the new tab (it knows the task's tabs).
        await bring_to_front(call.tab.target)
    snapshot = await call.snapshot()
    # What the request guard held, and whether it went: the model must not assume it
    # did. Taken once the answer is sure (the snapshot may meet a dialog instead).
    # A download that went is told of with its path, once it finished (the browser).
    notes += [
        held.note() for held in call.held_requests() if held.download is None or not held.sent
    ]
    return result(snapshot, note="; ".join(notes) or None, submits=submits)
