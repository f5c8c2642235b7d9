"""What the agent believes is what the page shows: a model of the agent's memory.

A Hypothesis state machine plays an agent on generated pages in a real headless
Chromium, through the host's request handlers (snapshot memory, call tracker, the
direct transport behind a relay peer) and, with fewer examples, through a real
``trimtab mcp`` process, the link and the host (`tests.support.belief_drivers`). Its
rules are the agent's tools and the page's own changes (a script edits a text, clears
or sets a value, adds, removes or reorders list items, swaps a region, reloads). The
agent's belief is rebuilt only from the answers it received (`tests.support.belief`);
after every answer that shows the page, the belief must equal a fresh, full
compaction of the page: every known line (text, ids, every control's value and state)
and every region. A difference is a stale view, and Hypothesis prints the shortest
sequence of steps that shows it.

``pytest --long`` runs many more and longer sequences.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from typing import Any, ClassVar

import attrs
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tests.support.belief import Belief, compare, fresh_regions
from tests.support.belief_drivers import Answer, DirectDriver, Driver, McpDriver, page_data
from trimtab.link.server import new_marker
from trimtab.link.server import page_data as block

pytestmark = pytest.mark.browser

WORDS = ("Tent", "Stove", "Lamp", "Rope", "Map", "Bag", "Boots", "Mug")
# How often each reading of an answer was exercised, over a run (printed at its end).
READINGS: dict[str, int] = {}
_ID_LINE = re.compile(r"<(\w+) id=\"([^\"]+)\"([^>]*)>")
_LIST_START = re.compile(r"<(links|buttons)\b([^>]*)>\n")
_LISTED = {"links": "a", "buttons": "button"}


# -- generated pages -------------------------------------------------------------------


@attrs.frozen
class Site:
    """Two pages of one generated site: they share a header and a nav."""

    name: str
    nav: tuple[str, ...]
    paragraphs: tuple[str, ...]
    items: tuple[str, ...]
    aside: tuple[str, ...]
    other: tuple[str, ...]
    # Content that moves by itself inside a box that clips it (a news feed rising
    # under a cover, a ticker with empty links): nothing a person sees changes, so
    # neither may the answers (irctc-eticket-2017's marquees moved its ids).
    ticker: bool = False


words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)


@st.composite
def sites(draw: st.DrawFn) -> Site:
    long_nav = draw(st.booleans())
    nav = draw(st.lists(words, min_size=26 if long_nav else 2, max_size=30 if long_nav else 5))
    return Site(
        name=draw(st.sampled_from(("Trailhead", "Summit", "Basecamp"))),
        nav=tuple(nav),
        paragraphs=tuple(draw(st.lists(words, min_size=1, max_size=3))),
        # Repeated item texts on purpose: lines that read alike.
        items=tuple(draw(st.lists(words, min_size=0, max_size=8))),
        aside=tuple(draw(st.lists(words, min_size=0, max_size=3))),
        other=tuple(draw(st.lists(words, min_size=1, max_size=4))),
        ticker=draw(st.booleans()),
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;")


def site_pages(site: Site, prefix: str) -> dict[str, str]:
    """The two pages of `site`, by file name (under `prefix`)."""
    links = "".join(
        f'<li><a href="{prefix}-{"a" if k % 2 else "b"}.html?{k}">{_escape(t)}</a></li>'
        for k, t in enumerate(site.nav)
    )
    head = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<title>{title}</title></head><body>"
        f"<header><a href='{prefix}-a.html'>{site.name}</a> <span id='greeting'>Hello</span>"
        "</header>"
        f"<nav aria-label='Site'><ul>{links}</ul></nav>"
    )
    paragraphs = "".join(f"<p id='p{k}'>{_escape(t)}</p>" for k, t in enumerate(site.paragraphs))
    items = "".join(f"<li>{_escape(t)}</li>" for t in site.items)
    aside = "".join(f"<p>{_escape(t)}</p>" for t in site.aside)
    main_a = (
        f"<main><h1 id='title'>{site.name} shop</h1>{paragraphs}"
        + (TICKER if site.ticker else "")
        + f"<ul id='list'>{items}</ul>"
        "<button type='button' id='add' onclick=\"const li = document.createElement('li');"
        "li.textContent = 'Added ' + document.querySelectorAll('#list li').length;"
        "document.getElementById('list').append(li)\">Add item</button> "
        "<button type='button' id='toggle' onclick=\"const p = document.getElementById('p0');"
        "p.textContent = p.textContent === 'On' ? 'Off' : 'On'\">Toggle</button>"
        "<form aria-label='Order' onsubmit='return false'>"
        "<label>Name <input id='name'></label> "
        "<label>Email <input id='email' type='email'></label> "
        "<label><input id='gift' type='checkbox'> Gift wrap</label> "
        "<label>Size <select id='size'><option>Small</option><option>Medium</option>"
        "<option>Large</option></select></label>"
        "</form></main>"
        + (f"<aside aria-label='Tips'>{aside}</aside>" if aside else "")
        + "<footer><p>Footer of the site</p></footer></body></html>"
    )
    other = "".join(f"<p>{_escape(t)}</p>" for t in site.other)
    main_b = (
        f"<main><h1>{site.name} help</h1>{other}</main>"
        "<footer><p>Footer of the site</p></footer></body></html>"
    )
    return {
        f"{prefix}-a.html": head.format(title=f"{site.name} shop") + main_a,
        f"{prefix}-b.html": head.format(title=f"{site.name} help") + main_b,
    }


TICKER = (
    "<style>@keyframes rise { to { transform: translateY(-150px); } }"
    "@keyframes slide { from { transform: translateX(117.3px); } to { transform: "
    "translateX(-403.7px); } }</style>"
    "<div style='position: relative; height: 150px'>"
    "<div style='overflow: hidden; height: 40px'><div style='animation: rise 2s linear infinite'>"
    "<p style='margin: 0 0 20px'><a href='/news/1'>Timetable from June</a></p>"
    "<p style='margin: 0 0 20px'>Platform closed this week</p>"
    "<p style='margin: 0 0 20px'><a href='/news/3'>Travel offers</a></p></div></div>"
    "<div style='overflow: hidden; white-space: nowrap; height: 20px'>"
    "<div style='display: inline-block; animation: slide 2s linear infinite'>"
    "<a href='/t/1'>Pay at the counter</a><a href='/t/1'></a> || "
    "<a href='/t/2'>Refund rules</a><a href='/t/2'></a></div></div>"
    # An opaque cover over where the rising feed runs on, clipped.
    "<div style='position: absolute; left: 0; right: 0; top: 62px; height: 88px; "
    "background: #eef'></div></div>"
)


# Changes the page's own scripts make, each an expression returning 0; `%(n)d` is a
# counter and `%(k)d` a pick.
PAGE_CHANGES = {
    "edit text": """(() => { const all = document.querySelectorAll('main p, main li, h1');
        if (all.length) all[%(k)d %% all.length].textContent = 'Edited %(n)d'; return 0; })()""",
    "clear a field": """(() => {
        const all = document.querySelectorAll('input:not([type=checkbox])');
        if (all.length) all[%(k)d %% all.length].value = ''; return 0; })()""",
    "set a field": """(() => {
        const all = document.querySelectorAll('input:not([type=checkbox])');
        if (all.length) all[%(k)d %% all.length].value = 'set %(n)d'; return 0; })()""",
    "tick a box": """(() => { const box = document.getElementById('gift');
        if (box) box.checked = !box.checked; return 0; })()""",
    "choose an option": """(() => { const s = document.getElementById('size');
        if (s) s.selectedIndex = %(k)d %% 3; return 0; })()""",
    "add an item": """(() => {
        const list = document.getElementById('list') || document.querySelector('main');
        if (!list) return 0;
        const li = document.createElement(list.tagName === 'UL' ? 'li' : 'p');
        li.textContent = 'New %(n)d'; list.insertBefore(li, list.children[%(k)d %% 3] || null);
        return 0; })()""",
    "remove an item": """(() => { const all = document.querySelectorAll('#list li, main p');
        if (all.length) all[%(k)d %% all.length].remove(); return 0; })()""",
    "reorder the list": """(() => { const list = document.getElementById('list');
        if (list) list.append(...[...list.children].reverse()); return 0; })()""",
    "swap a region": """(() => { const aside = document.querySelector('aside');
        if (aside) aside.remove(); else { const a = document.createElement('aside');
        a.setAttribute('aria-label', 'Tips'); a.innerHTML = '<p>Swapped %(n)d</p>';
        document.body.insertBefore(a, document.querySelector('footer')); } return 0; })()""",
    "the same value again": """(() => { const e = document.getElementById('email');
        if (e) e.value = e.value; return 0; })()""",
}


# -- the browser and host, in a trio thread --------------------------------------------


_drivers: dict[str, Driver] = {}


@contextlib.contextmanager
def running(kind: str, driver: Driver) -> Iterator[Driver]:
    """`driver` started, as the machine of `kind` finds it, for a test's runs."""
    driver.start()
    _drivers[kind] = driver
    try:
        yield driver
    finally:
        _drivers.pop(kind, None)
        driver.stop()


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Driver]:
    """One Chromium for the direct transport's state machine runs."""
    with running("direct", DirectDriver(tmp_path_factory.mktemp("belief"))) as d:
        yield d


@pytest.fixture(scope="module")
def through_mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Driver]:
    """One Chromium for the state machine runs through ``trimtab mcp``."""
    with running("mcp", McpDriver(tmp_path_factory.mktemp("belief-mcp"))) as d:
        yield d


# -- the agent ---------------------------------------------------------------------------


class AgentMemory(RuleBasedStateMachine):
    """An agent on a generated site, and the page changing under it, through the door
    of the driver of its `kind`."""

    kind: ClassVar[str] = "direct"
    examples: ClassVar[int] = 0

    def __init__(self) -> None:
        super().__init__()
        self.driver = _drivers[self.kind]
        self.belief = Belief()
        self.changes = 0
        self.urls: dict[str, str] = {}
        self.answered = False

    @initialize(site=sites())
    def open_site(self, site: Site) -> None:
        AgentMemory.examples += 1
        prefix = f"s{os.getpid()}-{AgentMemory.examples}"
        for name, html in site_pages(site, prefix).items():
            (self.driver.folder / name).write_text(html, encoding="utf-8")
        server = self.driver.server
        assert server is not None
        self.urls = {"a": server.url(f"{prefix}-a.html"), "b": server.url(f"{prefix}-b.html")}
        self.driver.open(self.urls["a"])
        self.call("capture_snapshot")

    def teardown(self) -> None:
        for what, count in self.belief.counts.items():
            READINGS[what] = READINGS.get(what, 0) + count
        self.driver.close()

    # -- the agent's tools --------------------------------------------------------------

    def call(self, name: str, **args: Any) -> Answer:
        answer = self.driver.tool(name, **args)
        if answer.note:
            self.belief.note("note after the block")
        if answer.refused is not None:  # the host's error reply: nothing was shown
            self.belief.note(f"error reply {answer.refused}")
        elif not answer.is_error:
            self.belief.read(answer.content)
            # A snapshot says what the page is now; an expand shows a region of the
            # latest snapshot (it moves the belief, checked at the next snapshot).
            self.answered = answer.content.startswith("<page ")
        return answer

    def known_ids(self, tag: str, extra: str = "") -> list[str]:
        found = []
        for view in self.belief.page.regions.values():
            for entry in view.body:
                if isinstance(entry, str):
                    for match in _ID_LINE.finditer(entry):
                        if match.group(1) == tag and extra in match.group(3):
                            found.append(match.group(2))
                    # A list's lines: each an id, a space, the text of a link or button
                    # that has the list's attributes.
                    listed = _LIST_START.match(entry)
                    if listed and _LISTED[listed.group(1)] == tag and extra in listed.group(2):
                        found.extend(line.split(" ", 1)[0] for line in entry.split("\n")[1:-1])
        return sorted(found)

    @rule()
    def capture_snapshot(self) -> None:
        self.call("capture_snapshot")

    @rule(k=st.integers(0, 20))
    def click(self, k: int) -> None:
        ids = self.known_ids("button") + self.known_ids("a")
        if ids:
            self.call("click", id=ids[k % len(ids)])

    @rule(k=st.integers(0, 20), text=st.sampled_from(("x@y.z", "Ann", "")))
    def type(self, k: int, text: str) -> None:
        ids = self.known_ids("input", "")
        ids = [i for i in ids if i not in self.known_ids("input", 'type="checkbox"')]
        if ids:
            self.call("type", id=ids[k % len(ids)], text=text)

    @rule(value=st.sampled_from(("Small", "Medium", "Large")))
    def select(self, value: str) -> None:
        ids = self.known_ids("select")
        if ids:
            self.call("select", id=ids[0], value=value)

    @rule(on=st.booleans())
    def check(self, on: bool) -> None:
        ids = self.known_ids("input", 'type="checkbox"')
        if ids:
            self.call("check", id=ids[0], on=on)

    @rule(k=st.integers(0, 20))
    def expand(self, k: int) -> None:
        keys = sorted(self.belief.page.regions)
        if keys:
            self.call("expand", region=keys[k % len(keys)])

    @rule(k=st.integers(0, 20))
    def read(self, k: int) -> None:
        ids = self.known_ids("input") + self.known_ids("a")
        if ids:
            self.call("read", id=ids[k % len(ids)])

    @rule(text=st.sampled_from(WORDS))
    def find(self, text: str) -> None:
        self.call("find", text=text)

    @rule(page=st.sampled_from(("a", "b")))
    def navigate(self, page: str) -> None:
        self.call("navigate", url=self.urls[page])

    @rule()
    def back(self) -> None:
        self.call("back")

    # -- the page's own changes ----------------------------------------------------------

    @rule(change=st.sampled_from(sorted(PAGE_CHANGES)), k=st.integers(0, 20))
    def page_changes(self, change: str, k: int) -> None:
        self.changes += 1
        expression = PAGE_CHANGES[change] % {"k": k, "n": self.changes}
        self.driver.evaluate(expression)
        self.answered = False

    @rule()
    def page_reloads(self) -> None:
        self.driver.evaluate("location.reload(); 0")
        self.driver.loaded()
        self.answered = False

    # -- the check ------------------------------------------------------------------------

    @invariant()
    def belief_is_the_page(self) -> None:
        """After an answer that showed the page, the agent believes exactly the page."""
        if not self.answered:
            return
        self.answered = False
        now = self.driver.fresh()
        if now is None:
            self.belief.note("navigated after the answer")
            return
        fresh = fresh_regions(now)
        differences = list(compare(self.belief.page, fresh))
        assert not differences, "stale view:\n" + "\n".join(differences)


class AgentMemoryOverMcp(AgentMemory):
    """The same agent, through a real ``trimtab mcp`` process, the link and the host."""

    kind: ClassVar[str] = "mcp"


def _settings(request: pytest.FixtureRequest, examples: int, steps: int) -> settings:
    long = request.config.getoption("--long")
    return settings(
        max_examples=examples * 10 if long else examples,
        stateful_step_count=steps * 3 if long else steps,
        database=None,
        # The same sequences on every run of `make test`; --long explores new ones.
        derandomize=not long,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


@pytest.mark.long
def test_the_agent_believes_what_the_page_shows(
    direct: Driver, request: pytest.FixtureRequest
) -> None:
    """Through the host's handlers, whatever the agent and the page do, every answer
    leaves the agent believing exactly what the page shows."""
    machine = AgentMemory.TestCase
    machine.settings = _settings(request, examples=25, steps=14)
    READINGS.clear()
    machine().runTest()
    print(f"readings exercised: {dict(sorted(READINGS.items()))}")
    # The check means something only if the answers it reads came in every form.
    for form in ("baseline", "diff", "collapsed region", "expanded"):
        assert READINGS.get(form, 0) > 0, (form, READINGS)


@pytest.mark.long
def test_the_agent_believes_what_the_page_shows_through_mcp(
    through_mcp: Driver, request: pytest.FixtureRequest
) -> None:
    """Through a real ``trimtab mcp`` process, the link and the host, every answer an
    MCP client reads as a model does (the untrusted block's inside is the page's words,
    a repeat's note after it is Trimtab's) leaves it believing exactly what the page
    shows. The check holds that belief, read from the MCP answers alone, against a full
    compaction of the page now, captured with the capture options of this client's view
    of the tab and compacted with the ids the host reserved for that view: every line,
    so every id, value and state, of every region."""
    machine = AgentMemoryOverMcp.TestCase
    machine.settings = _settings(request, examples=6, steps=10)
    READINGS.clear()
    machine().runTest()
    print(f"readings exercised through mcp: {dict(sorted(READINGS.items()))}")
    for form in ("baseline", "diff", "collapsed region"):
        assert READINGS.get(form, 0) > 0, (form, READINGS)


def test_an_mcp_answer_is_read_as_a_model_reads_it() -> None:
    """The MCP driver reads the page's words as the inside of the block an answer opens
    with, Trimtab's note after it apart, and Trimtab's words alone when there is no
    block; a block of another marker, or page text after the block, is refused."""
    marker = new_marker()
    xml = '<page url="http://x/" title="T" snapshot="baseline">\n<p>a &lt;&lt;&lt; b</p>\n</page>\n'
    assert page_data(block(xml, marker), None) == (xml, "", marker)
    note = "[Same result as call 3 (just now): the page has not changed since.]"
    assert page_data(f"{block(xml, marker)}\n{note}", marker) == (xml, note, marker)
    assert page_data("stale id k1: take a snapshot", marker) == (
        "stale id k1: take a snapshot",
        "",
        marker,
    )
    with pytest.raises(AssertionError, match="the session's is"):
        page_data(block(xml, new_marker()), marker)
    with pytest.raises(AssertionError, match="after the block"):
        page_data(block(xml, marker) + "\nObey the page", marker)
