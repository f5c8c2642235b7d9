"""Sites per task: where a task may act, the person's always and never lists, and the
one function that decides and asks about a site (`decide_site`).

A task (the side panel agent's task, or an outside client's session: the tool call's
``session``) starts allowed on the site of its tab's page at its first call. Acting
on, or navigating to, any other site asks the person once per site per task: "once"
allows it for the rest of the task, "always" puts it on the always list, "no" refuses
the one call. A site on the never list is refused without asking, whatever the task.
A routine's run may start with the sites the person granted that routine (`grant`),
for that run's task only.

The lists are the person's, kept in ``sites.json`` in the host's state folder (0600,
written whole to a temporary file and renamed, so a crash never leaves half a list).

Beside them, in ``evaluate.json``, the codes the person lets `evaluate` run without
asking, each on one site (`EvaluateAlways`, `decide_evaluate`): a list of its own,
since acting on a site is not running any code the model writes there.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final, Literal, TypeAlias

import attrs

from ..sites import Site, SiteError, parse_site
from ._evaluate_always import EvaluateAlways
from ._files import read_or_set_aside, write_whole
from ._question import ONCE_OR_NO, Answer, Ask, Question

__all__ = ["SITES_FILE", "SitePolicy", "Verdict", "decide_evaluate", "decide_site"]

log = logging.getLogger("trimtab.envelope")

SITES_FILE: Final = "sites.json"
# More sites than a person keeps on a list by hand; a bigger file is not theirs.
MAX_LISTED: Final = 10_000

Verdict: TypeAlias = Literal["allow", "ask", "refuse"]


@attrs.define(eq=False)
class SitePolicy:
    """The person's always and never lists, and the sites each task was allowed.

    ``folder`` is where ``sites.json`` lives (the host's state folder); None keeps the
    lists in memory only.
    """

    folder: Path | None = None
    always: frozenset[Site] = frozenset()
    never: frozenset[Site] = frozenset()
    # The codes `evaluate` runs without asking, each on one site (the person's "always").
    evaluate: EvaluateAlways = attrs.field(
        default=attrs.Factory(lambda self: EvaluateAlways(self.folder), takes_self=True)
    )
    # task -> the sites it may act on (where it started, and its "once" answers).
    _tasks: dict[str, set[Site]] = attrs.field(factory=dict, init=False)
    # task -> the sites the person granted the routine it runs (`grant`).
    _granted: dict[str, frozenset[Site]] = attrs.field(factory=dict, init=False)

    @classmethod
    def load(cls, folder: Path | None) -> SitePolicy:
        """The lists kept in ``folder``; a file that cannot be read is set aside (and
        logged), so the person starts with empty lists rather than no host."""
        policy = cls(folder)
        if folder is None:
            return policy
        policy.evaluate = EvaluateAlways.load(folder)
        lists = read_or_set_aside(folder / SITES_FILE, _lists_of, "site lists")
        if lists is not None:
            policy.always, policy.never = lists
        return policy

    # -- tasks -------------------------------------------------------------------

    def started(self, task: str) -> bool:
        """Whether ``task`` has made its first call (and so has its starting site)."""
        return task in self._tasks

    def start(self, task: str, site: Site) -> None:
        """Start ``task`` on ``site`` (its tab's page at its first call); a task that
        started already keeps what it has."""
        allowed = self._tasks.setdefault(task, set())
        if not allowed and not site.opaque:
            allowed.add(site)

    def allowed(self, task: str) -> frozenset[Site]:
        """The sites ``task`` may act on besides the always list."""
        return frozenset(self._tasks.get(task, ())) | self._granted.get(task, frozenset())

    def grant(self, task: str, sites: frozenset[Site]) -> None:
        """Let ``task`` (a routine's run) act on ``sites`` without asking, as the person
        granted that routine: for this task only, until `ungrant` (the run ended). It
        does not start the task: its first call's site is still where it started."""
        granted = frozenset(site for site in sites if not site.opaque)
        if granted:
            self._granted[task] = granted
        else:
            self._granted.pop(task, None)

    def ungrant(self, task: str) -> None:
        """Drop the sites granted to ``task`` (the routine's run ended)."""
        self._granted.pop(task, None)

    def forget(self, task: str) -> None:
        """Drop what ``task`` was allowed (the task ended)."""
        self._tasks.pop(task, None)
        self._granted.pop(task, None)

    def verdict(self, task: str, site: Site) -> Verdict:
        """Whether ``task`` may act on ``site`` now, must ask first, or may not at all."""
        if site in self.never:
            return "refuse"
        if site.opaque:
            # No site to remember or allow: every such call is asked about.
            return "ask"
        if site in self.always or site in self._tasks.get(task, ()):
            return "allow"
        if site in self._granted.get(task, ()):
            return "allow"
        return "ask"

    def remember(self, task: str, site: Site, *, always: bool) -> None:
        """The person's yes: for the rest of ``task`` ("once"), or for every task."""
        if site.opaque:
            return
        self._tasks.setdefault(task, set()).add(site)
        if always and site not in self.always:
            self.always |= {site}
            self.never -= {site}
            try:
                self.save()
            except OSError as exc:
                # The yes still holds while the host runs; the person sees the list.
                log.warning("the site lists could not be saved: %s", exc)

    # -- the lists -----------------------------------------------------------------

    def lists(self) -> dict[str, list[str]]:
        """The always and never lists as the side panel shows them."""
        return {
            "always": sorted(str(site) for site in self.always),
            "never": sorted(str(site) for site in self.never),
        }

    def set_lists(self, always: Iterable[object], never: Iterable[object]) -> None:
        """Replace both lists with the person's (`SiteError` naming a bad entry: each must
        be a site, and no site on both lists); saved at once."""
        lists = _lists_of({"always": list(always), "never": list(never)})
        self.save(*lists)
        self.always, self.never = lists

    def save(
        self, always: frozenset[Site] | None = None, never: frozenset[Site] | None = None
    ) -> None:
        """Write the lists (these, or the policy's own) to ``sites.json``: 0600, to a
        temporary file renamed over the old one, so a reader never sees half of it."""
        if self.folder is None:
            return
        lists = {
            "always": sorted(str(site) for site in (self.always if always is None else always)),
            "never": sorted(str(site) for site in (self.never if never is None else never)),
        }
        write_whole(self.folder, SITES_FILE, lists)


def _lists_of(raw: object) -> tuple[frozenset[Site], frozenset[Site]]:
    if not isinstance(raw, Mapping):
        raise SiteError(f"the site lists must be an object with always and never; got {raw!r:.80}")
    found: dict[str, frozenset[Site]] = {}
    for name in ("always", "never"):
        entries = raw.get(name, [])
        if not isinstance(entries, list):
            raise SiteError(f"{name} must be a list of sites; got {entries!r:.80}")
        if len(entries) > MAX_LISTED:
            raise SiteError(f"{name} holds {len(entries)} sites; at most {MAX_LISTED}")
        found[name] = frozenset(parse_site(entry) for entry in entries)
    both = found["always"] & found["never"]
    if both:
        raise SiteError(f"{str(min(both))!r} is on both the always and the never list")
    return found["always"], found["never"]


async def decide_site(
    policy: SitePolicy, task: str, site: Site, ask: Ask, question: Question
) -> Answer:
    """Whether ``task`` may go on to ``site``: allowed sites pass, the never list refuses
    without asking, any other site asks the person ``question`` (what="site") and
    remembers their yes ("once" for the task, "always" on the list).

    The one place that decides about sites: the checks before an action and the
    judge of the requests an action sends both call it.
    """
    verdict = policy.verdict(task, site)
    if verdict == "allow":
        return Answer.yes()
    if verdict == "refuse":
        return Answer.listed(site)
    answer = await ask(question)
    if answer.allow:
        policy.remember(task, site, always=answer.always)
    return answer


async def decide_evaluate(
    policy: SitePolicy, site: Site | None, ask: Ask, question: Question
) -> Answer:
    """Whether an `evaluate` call may run its JavaScript on ``site`` (the tab's page,
    from the browser; None when unknown): the code of ``question`` (the exact text the
    call runs and the person is shown) runs unasked where the person said "always" to
    that very code on that site; any other code, or site, asks ``question``. "Always"
    keeps (site, this code) and is offered only where it can hold (`EvaluateAlways`);
    "once" allows this one call."""
    code = question.args.get("expression")
    if not isinstance(code, str):
        # No code to judge (the tool refuses such a call before asking): ask, keep nothing.
        return await ask(attrs.evolve(question, choices=ONCE_OR_NO))
    if policy.evaluate.allows(site, code):
        return Answer.yes()
    keep = policy.evaluate.can_remember(site, code)
    answer = await ask(question if keep else attrs.evolve(question, choices=ONCE_OR_NO))
    if answer.allow and answer.always and keep and site is not None:
        policy.evaluate.remember(site, code)
    return answer
