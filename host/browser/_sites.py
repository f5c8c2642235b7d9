"""Sites per task, before a call acts: where it would act or go, and the person's say.

`check_sites` runs before every tool call (`HostState.call_tool`). A task starts
allowed on the site of its tab's page at its first call. Then:

- ``navigate``, ``back`` and ``forward`` go to another page: the site of that page
  (the URL asked for; the history entry) must be allowed, or the person is asked.
  ``javascript:`` and ``data:`` URLs are refused: the first runs script in the page,
  the second is a page the agent writes itself, which the browser also keeps pages
  from opening.
- Every other action (the tools with side effects) acts on the tab's page: its site
  must be allowed, or the person is asked. A page with no site of its own (an
  ``about:blank`` nobody wrote into) is no place anyone is logged in: it passes. A
  pop-up its opener writes into is the opener's site.
- Reading tools are not asked about: reading the page the task is on does nothing to
  it, and every way a task gets to another site (a navigation, a click that leaves)
  is asked about before it happens; only the never list keeps the agent from even
  reading a page (when the person opened it there themselves).

The facts come from the browser (the tab's history and frame tree), never from the
page; the decision and the question are the envelope's (`decide_site`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs
import trio

from pycdp_bridge import CDPError, Target
from pycdp_bridge import protocol as cdp

from ..envelope import Answer, Ask, SitePolicy, decide_site
from ..sites import Site, site_note, site_of
from ._call import ToolCall
from ._errors import page_timeout

__all__ = [
    "PageFacts",
    "SiteRefusal",
    "check_sites",
    "read_page",
    "site_allowed",
    "site_reason",
]

_HISTORY_STEPS: Final = {"back": -1, "forward": +1}
_OPENING: Final = frozenset({"navigate", "new_tab"})
# URLs navigate never opens, and why, in words for the model and the person.
_NEVER_OPENED: Final = {
    "javascript": "a javascript: URL runs script in the page instead of opening one",
    "data": (
        "a data: URL is a page the agent would write itself (the browser also keeps pages "
        "from opening them)"
    ),
    "blob": "a blob: URL holds data a page made; open the page that made it instead",
}


@attrs.frozen
class SiteRefusal:
    """A call the site rules stopped before it acted: what the tool answers, the
    person's answer (None when the rule needs nobody's: a javascript: URL), and why
    (Trimtab's words; a site's name comes from a URL the page may have written)."""

    content: str
    answer: Answer | None
    reason: str


@attrs.frozen
class PageFacts:
    """What the browser says of the tab's page and its history."""

    site: Site
    entries: tuple[str, ...] = ()
    current: int = 0


async def read_page(
    sites: SitePolicy, call: ToolCall, target: Target, acts: bool
) -> PageFacts | None:
    """What `check_sites` needs to know of the tab's page for ``call``, read from the
    browser only when it is needed (None: nothing to check)."""
    needs_page = acts or not sites.started(call.session) or bool(sites.never)
    if not needs_page or target.crashed:
        return None
    return await _page_facts(target)


async def check_sites(
    sites: SitePolicy,
    call: ToolCall,
    facts: PageFacts | None,
    acts: bool,
    ask: Ask,
    frame_url: str | None = None,
) -> SiteRefusal | None:
    """Decide (and ask) about the sites ``call`` would act on or go to, given what
    `read_page` found and the URL of the frame of the element it acts on (``frame_url``,
    when that is not the tab's main frame); None when it may go on, a `SiteRefusal`
    when it must not."""
    task = call.session
    # new_tab goes to its URL like navigate, in a tab of its own.
    going = call.name in _OPENING or call.name in _HISTORY_STEPS
    if facts is not None and not sites.started(task):
        sites.start(task, facts.site)
    if facts is not None and not going and facts.site in sites.never:
        answer = Answer.listed(facts.site)
        where = f"the page in tab {call.tab} is on {facts.site}"
        return SiteRefusal(_refused(answer, where), answer, where)
    destinations: list[tuple[Site, str]] = []
    if call.name in _OPENING:
        url = call.args.get("url")
        if not isinstance(url, str):
            return None  # the tool names the bad argument
        destination = site_of(url)
        why = _NEVER_OPENED.get(destination.scheme)
        if destination.opaque and why is not None:
            return SiteRefusal(
                f"Not done: {call.name} does not open {destination}: {why}. Do not retry it.",
                None,
                why,
            )
        destinations.append((destination, f"{call.name} opens"))
    elif call.name in _HISTORY_STEPS and facts is not None:
        index = facts.current + _HISTORY_STEPS[call.name]
        if not 0 <= index < len(facts.entries):
            return None  # the tool says there is no such page
        destinations.append((site_of(facts.entries[index]), f"{call.name} goes to a page on"))
    elif acts and facts is not None:
        destinations.append(
            (facts.site, f"{call.name} acts on the page in tab {call.tab}, which is on")
        )
        frame = site_of(frame_url) if frame_url is not None else None
        if frame is not None and not frame.opaque and frame != facts.site:
            # An element in a frame of another site (an ad, an embedded widget): acting
            # there is acting on that site.
            destinations.append(
                (frame, f"{call.name} acts inside a frame of the page that belongs to")
            )
    for destination, doing in destinations:
        if destination.opaque and destination.scheme in ("about", ""):
            continue  # a page with no site: nobody is logged in there
        answer = await site_allowed(sites, call, destination, ask, doing)
        if not answer.allow:
            reason = site_reason(sites, task, destination, doing)
            return SiteRefusal(_refused(answer, reason), answer, reason)
    return None


async def site_allowed(
    sites: SitePolicy, call: ToolCall, site: Site, ask: Ask, doing: str, *, after: bool = False
) -> Answer:
    """Whether ``call``'s task may go on to ``site``, asking the person when it must
    (`decide_site`); ``doing`` says what the call does there, for the question
    ("navigate opens", "clicking “Pay” sends a request to"). The request guard's judge
    calls this for a page request to a site the task was not allowed."""
    question = call.question(
        "site", reason=site_reason(sites, call.session, site, doing), site=str(site), after=after
    )
    return await decide_site(sites, call.session, site, ask, question)


def site_reason(sites: SitePolicy, task: str, site: Site, doing: str) -> str:
    """Why Trimtab asks about ``site``, in its own words: what the call does there,
    what the task may act on, and what to know about the site's name."""
    allowed = sorted(str(s) for s in sites.allowed(task))
    where = f"it may act on {', '.join(allowed)}" if allowed else "it has no site yet"
    reason = f"{doing} {site}, a site this task has not been allowed ({where})"
    note = site_note(site)
    return f"{reason}; {note}" if note else reason


def _refused(answer: Answer, reason: str) -> str:
    return f"Not done: {answer.refusal()} ({reason}). Do not retry it; ask the person or stop."


async def _page_facts(target: Target) -> PageFacts:
    """The site of the tab's page and its history, from the browser: the history
    answers even while a dialog blocks the page; the frame tree says whose an
    ``about:blank`` page is (its opener's, when the opener wrote into it)."""
    history: Mapping[str, Any] = await target.execute(cdp.page_get_navigation_history())
    entries = tuple(str(entry.get("url", "")) for entry in history.get("entries", []))
    current = int(history.get("currentIndex", len(entries) - 1))
    url = entries[current] if 0 <= current < len(entries) else ""
    site = site_of(url)
    if site.opaque and site.scheme == "about" and target.open_dialog is None:
        site = await _creator_site(target, url) or site
    return PageFacts(site, entries, current)


async def _creator_site(target: Target, url: str) -> Site | None:
    """The site an ``about:`` page belongs to, from its frame's security origin."""
    with trio.move_on_after(page_timeout()):
        try:
            tree: Mapping[str, Any] = await target.execute(cdp.page_get_frame_tree())
        except CDPError:
            return None
        origin = site_of(str(tree["frameTree"]["frame"].get("securityOrigin", "")))
        return None if origin.opaque else site_of(url, creator=origin)
    return None
