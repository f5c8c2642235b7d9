"""A routine run again without the model: find each step's element, act, check the effect.

`replay` drives a `Browser` (the host's own tool calls, through the envelope like any
task's: sites, submits, downloads and secrets are asked about as they were the first
time). For each step it finds the elements in the tab's latest snapshot (a fresh one
when they are not there), acts, and checks that the tab is on the page the step left
it on when it was recorded. It never guesses: a step whose element is gone or is one
of several, or whose effect differs, ends the run as ``needs_help``, naming the step,
why, and the plan from there; whoever runs the routine (the agent that asked, the
person) does that step and runs the rest with ``start_at``, and may keep what it did in
the routine (``_amend``). The answers of the steps
marked as the result (the reads after the last action) are the run's result; without
such a step, the page it ends on, whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Literal, Protocol
from urllib.parse import urldefrag

import attrs
import trio

from ._format import FieldStep, Parameter, Routine, RoutineError, Step, Target
from ._pages import url_matches, url_pattern
from ._resolve import PageSeen, resolve

__all__ = ["Acted", "Browser", "Run", "TabSeen", "bind_values", "replay"]

Status = Literal["done", "needs_help", "refused"]

# A tab a step just opened shows no page in the tab strip until its first one commits
# (a click that opens a result behind): a switch to it waits this long for it, as a
# person waits for the tab to show its page before picking it.
OPENING_WAIT: Final = 10.0


@attrs.frozen
class Acted:
    """What one tool call of the replay answered."""

    content: str
    is_error: bool
    refused: bool  # the person said no (or did not answer)
    url: str | None


@attrs.frozen
class TabSeen:
    """One of the run's tabs as the tab strip shows it: its number, title and URL."""

    tab: int
    title: str
    url: str


class Browser(Protocol):
    """The tab a routine runs in, as the replay uses it (and the tabs its steps
    opened, which a ``switch_tab`` step moves it to)."""

    async def act(self, tool: str, args: Mapping[str, object], at: int | None = None) -> Acted:
        """Run one tool call in the tab, through the host's envelope: step ``at``
        (0-based) of the routine, or (None) the opening of its start page."""
        ...

    async def look(self, *, fresh: bool) -> PageSeen:
        """The tab as its latest snapshot shows it; ``fresh``: a snapshot taken now."""
        ...

    async def address(self) -> str:
        """The tab's URL now, without a snapshot."""
        ...

    async def whole_page(self) -> str:
        """The tab's page as a snapshot shows it to one who has seen nothing of it."""
        ...

    async def tabs(self) -> Sequence[TabSeen]:
        """The tabs the run may switch to: the one it started in and those opened
        from them."""
        ...


@attrs.frozen
class Run:
    """How a replay ended: ``done``; ``needs_help`` at step ``at`` (0-based), with why
    and the plan from there; ``refused`` when the person said no to step ``at``."""

    routine: str
    status: Status
    steps: int  # the routine's steps
    done: int  # steps done in this run
    results: tuple[str, ...] = ()
    at: int | None = None
    why: str = ""
    plan: tuple[str, ...] = ()
    # The steps (0-based) that submitted without asking: the person marked them "don't
    # ask again for this routine" and the submit matched the recording.
    unasked: tuple[int, ...] = ()

    def words(self) -> str:
        """The run in words, for the model or the person (the page's words inside
        ``why`` and ``results`` are for the door to mark as the page's)."""
        if self.status == "done":
            said = f"Routine {self.routine!r} done: {self.done} of {self.steps} steps, no model."
        elif self.status == "refused":
            said = f"Routine {self.routine!r} stopped at step {self.at_number}: {self.why}."
        else:
            plan = "\n".join(f"{self.at_number + i}. {words}" for i, words in enumerate(self.plan))
            said = (
                f"Routine {self.routine!r} needs help at step {self.at_number} of {self.steps}: "
                f"{self.why}. Do that step with the tools, then run the routine again with "
                f"start_at={self.at_number + 1} and the same parameters to go on without the "
                "model (with keep_healed, what you did is kept in the routine in place of "
                f"that step). The plan from here:\n{plan}"
            )
        for step in self.unasked:
            said += (
                f"\nStep {step + 1} submitted without asking: the person marked it "
                '"don\'t ask again for this routine" and it submitted as recorded.'
            )
        for result in self.results:
            said += f"\nResult:\n{result}"
        return said

    @property
    def at_number(self) -> int:
        """The step ``at`` as a person counts (from 1)."""
        return (self.at or 0) + 1


def bind_values(routine: Routine, given: Mapping[str, object]) -> dict[str, str]:
    """Each parameter's value for a run: given, else its default; `RoutineError`
    naming a parameter that is unknown, missing or not a text or a number."""
    unknown = sorted(set(given) - {p.name for p in routine.parameters})
    if unknown:
        known = ", ".join(p.name for p in routine.parameters) or "none"
        raise RoutineError(
            f"routine {routine.name!r} has no parameter {unknown[0]!r} (its parameters: {known})"
        )
    values: dict[str, str] = {}
    for parameter in routine.parameters:
        values[parameter.name] = _value_of(routine, parameter, given.get(parameter.name))
    return values


def _value_of(routine: Routine, parameter: Parameter, value: object) -> str:
    if value is None:
        if parameter.default is None:
            kind = "a secret, never kept" if parameter.kind == "secret" else "it has no default"
            raise RoutineError(
                f"routine {routine.name!r} needs parameter {parameter.name!r} "
                f"({parameter.about or 'a value'}; {kind})"
            )
        return parameter.default
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RoutineError(
            f"parameter {parameter.name!r} = {value!r:.40} is not a text or a number"
        )
    return str(value)


async def replay(
    routine: Routine, browser: Browser, values: Mapping[str, str], *, start_at: int = 0
) -> Run:
    """Run ``routine`` from step ``start_at`` (0-based) in ``browser`` with parameter
    ``values`` (`bind_values`), without a model."""
    steps = routine.steps
    if not 0 <= start_at < len(steps):
        raise RoutineError(
            f"start_at = {start_at + 1} is not a step of routine {routine.name!r} "
            f"(1 to {len(steps)})"
        )
    results: list[str] = []
    # No read after the last action: the run answers with what its last step answered.
    answers_last = not any(step.result for step in steps)
    # The tabs open before the run: a switch or a close goes to a tab this run opened
    # before one open already (the person's pick between two tabs of one title).
    names_tabs = any(step.tool in ("switch_tab", "close_tab") for step in steps)
    open_before = {seen.tab for seen in await browser.tabs()} if names_tabs else set()

    def ended(status: Status, at: int, why: str) -> Run:
        plan = tuple(step.words() for step in steps[at:]) if status == "needs_help" else ()
        return Run(routine.name, status, len(steps), at - start_at, tuple(results), at, why, plan)

    if start_at == 0 and routine.start:
        before = await browser.address()
        opened = await browser.act("navigate", {"url": routine.start})
        if not opened.is_error and urldefrag(before).url == urldefrag(routine.start).url:
            # Already on that document: a navigation that only moves the fragment does
            # not load it again, and a routine starts from its page as it loads.
            opened = await browser.act("reload", {})
        if opened.refused:
            return ended("refused", 0, "the person did not let it open its start page")
        if opened.is_error or not url_matches(url_pattern(routine.start), opened.url or ""):
            return ended(
                "needs_help",
                0,
                f"its start page {routine.start} opened as {opened.url} (a sign-in page? "
                "a routine never types a stored credential)",
            )
    else:
        # Every step reads or acts on the tab as the run's own look last showed it.
        await browser.look(fresh=False)
    for at in range(start_at, len(steps)):
        step = steps[at]
        args = await _arguments(step, browser, values, open_before)
        if isinstance(args, str):
            return ended("needs_help", at, args)
        acted = await browser.act(step.tool, args, at)
        if acted.refused:
            return ended("refused", at, "the person said no")
        if acted.is_error:
            return ended("needs_help", at, f"the tool answered with an error: {acted.content}")
        # (No URL: the step closed its tab, a pop-up done with; the next step's page
        # is checked where it acts.)
        if step.after and acted.url is not None and not url_matches(step.after, acted.url):
            return ended(
                "needs_help",
                at + 1 if at + 1 < len(steps) else at,
                f"step {at + 1} left the tab on {acted.url}, not on {step.after} as recorded",
            )
        if step.result:
            results.append(acted.content)
    if answers_last:
        # The last step's answer shows what changed since the run's own looks, which
        # whoever reads the result never saw: the page whole is the result.
        results.append(await browser.whole_page())
    return Run(routine.name, "done", len(steps), len(steps) - start_at, tuple(results))


async def _arguments(
    step: Step, browser: Browser, values: Mapping[str, str], before: set[int]
) -> dict[str, object] | str:
    """The step's arguments with its elements found in the tab now and its parameters
    given, or why they cannot be (``before``: the tabs open before the run)."""
    if step.tool == "switch_tab":
        return await _tab_of(step.title, step.after, browser, before)
    if step.tool == "close_tab":
        return await _tab_of(step.title, step.page, browser, before)
    args: dict[str, object] = {key: _given(value, values) for key, value in step.args.items()}
    targets: list[tuple[str, Target]] = []
    if step.target is not None:
        targets.append(("id", step.target))
    if step.to is not None:
        targets.append(("to", step.to))
    if not targets and not step.fields:
        return args
    found = await _find(step, browser, [t for _, t in targets], step.fields)
    if isinstance(found, str):
        return found
    for (key, _), eid in zip(targets, found, strict=False):
        args[key] = eid
    if step.fields:
        ids = found[len(targets) :]
        args["fields"] = [
            {"id": eid, "value": _given(field.value, values)}
            for eid, field in zip(ids, step.fields, strict=True)
        ]
    return args


async def _find(
    step: Step, browser: Browser, targets: Sequence[Target], fields: Sequence[FieldStep]
) -> list[str] | str:
    """The ids of ``targets`` and ``fields``' targets in the tab, from its latest
    snapshot or, when one is not there, a fresh one; else why not."""
    wanted = [*targets, *(f.target for f in fields)]
    why = ""
    for fresh in (False, True):
        page = await browser.look(fresh=fresh)
        if step.page and not url_matches(step.page, page.url):
            why = f"the step acts on {step.page} but the tab shows {page.url}"
            continue
        found = [resolve(target, page) for target in wanted]
        missing = next((f for f in found if f.eid is None), None)
        if missing is None:
            return [f.eid for f in found if f.eid is not None]
        why = missing.why
    return why


async def _tab_of(
    title: str, page: str, browser: Browser, before: set[int]
) -> dict[str, object] | str:
    """The arguments of a ``switch_tab`` or ``close_tab`` step: the one tab with the
    title it recorded (any, when it recorded none) showing its page, of those this run
    opened, else of those open before it; else why not (no such tab, or several:
    never a guess). A tab the run opened that shows no page yet is waited for first
    (`OPENING_WAIT`)."""
    waited_by = trio.current_time() + OPENING_WAIT
    while True:
        tabs = await browser.tabs()
        opening = [seen for seen in tabs if seen.tab not in before and _opening(seen)]
        if not opening or trio.current_time() >= waited_by:
            break
        await trio.sleep(0.1)
    found = [
        seen.tab
        for seen in tabs
        if url_matches(page, seen.url) and (not title or seen.title == title)
    ]
    found = [tab for tab in found if tab not in before] or found
    if len(found) == 1:
        return {"tab": found[0]}
    shown = "; ".join(f"{seen.title!r} at {seen.url}" for seen in tabs) or "none"
    which = f"the tab {title!r} at {page}"
    if not found:
        return f"no tab of the run is {which} (its tabs: {shown})"
    return f"{len(found)} tabs of the run are {which}: not one to pick (its tabs: {shown})"


def _opening(seen: TabSeen) -> bool:
    """Whether tab ``seen`` shows no page yet (opened, its first page not committed)."""
    return seen.url in ("", "about:blank")


def _given(value: object, values: Mapping[str, str]) -> object:
    if isinstance(value, Mapping) and "param" in value:
        return values[str(value["param"])]
    return value
