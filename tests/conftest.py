"""Shared fixtures: a real headless Chromium per test (a browser context of the session's
one Chromium, where no name but `*.test` and localhost resolves), pages, the corpus,
servers."""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import trio

from pycdp_bridge import Browser, PageTarget, launch_browser
from tests.support import (
    LAUNCHED_PROFILES,
    LOCAL_NAMES,
    TEST_PAGES,
    StaticServer,
    browser_processes,
    serve_static,
)
from tests.support.shared_browser import Shared, SharedChromium

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
# Hypothesis times no example: a timed assertion is a benchmark's, not a test's, and an
# example slowed by a busy machine (two suites side by side) is not a failure.
hypothesis.settings.register_profile("trimtab", deadline=None)
hypothesis.settings.load_profile("trimtab")
# Every async test runs under a deadline, so a test that waits on a browser, a host or
# a socket that never answers fails with TooSlowError instead of hanging the run.
# `@pytest.mark.deadline(seconds)` sets another one for a test that needs longer.
DEADLINE = 120.0


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        help="run the state machines (tests/tracker/test_belief.py) with many more, longer"
        " sequences",
    )
    parser.addoption(
        "--fresh-browser",
        action="store_true",
        help="launch a Chromium for every test that asks for a browser, instead of a browser"
        " context of one shared Chromium (slower; rules out a leak between tests)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "deadline(seconds): this test's time limit")
    config.addinivalue_line(
        "markers", "popups: the test's `browser` lets pages open pop-ups without a gesture"
    )
    config.addinivalue_line(
        "markers", "long: takes a quarter of a minute or more; the run starts it first"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        test = getattr(item, "obj", None)
        if isinstance(item, pytest.Function) and inspect.iscoroutinefunction(test):
            marker = item.get_closest_marker("deadline")
            item.obj = _with_deadline(test, float(marker.args[0]) if marker else DEADLINE)
    # The long tests first: started last, one of them would end the run alone while
    # the other test processes wait (the test processes take tests in this order).
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def _with_deadline(
    test: Callable[..., Awaitable[Any]], seconds: float
) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(test)
    async def run(*args: Any, **kwargs: Any) -> Any:
        with trio.fail_after(seconds):
            return await test(*args, **kwargs)

    return run


@pytest.fixture(scope="session", autouse=True)
def _private_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Hosts the tests start (by Chromium's native messaging or as processes) keep their
    link endpoints, link secret and logs in a folder of the run's own, never in the
    developer's (``~/.local/state/trimtab``, ``$XDG_RUNTIME_DIR/trimtab``)."""
    root = tmp_path_factory.mktemp("trimtab-home")
    state, runtime = root / "state", root / "runtime"
    for folder in (state, runtime):
        folder.mkdir(mode=0o700)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_STATE_HOME", str(state))
        patch.setenv("XDG_RUNTIME_DIR", str(runtime))
        yield


@pytest.fixture(scope="session", autouse=True)
def _no_leftover_browsers() -> Iterator[None]:
    """Fail the session if any Chromium the tests started is still running."""
    yield
    leftovers = {str(p): browser_processes(p) for p in LAUNCHED_PROFILES}
    leftovers = {profile: pids for profile, pids in leftovers.items() if pids}
    assert not leftovers, f"Chromium processes left running after the tests: {leftovers}"


@pytest.fixture(scope="session")
def shared_chromium(pytestconfig: pytest.Config) -> Iterator[Shared]:
    """One headless Chromium for the session's `browser` fixtures, stopped (with its
    whole process group) at the end; `_no_leftover_browsers` checks it went. None with
    ``--fresh-browser``."""
    if pytestconfig.getoption("--fresh-browser"):
        yield None
        return
    shared = SharedChromium()
    shared.start()
    try:
        yield shared
    finally:
        shared.stop()


@pytest.fixture
async def browser(
    request: pytest.FixtureRequest,
    shared_chromium: Shared,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Browser]:
    """A headless Chromium of the test's own: a fresh browser context (its own tabs,
    cookies, storage and cache, and downloads folder) of the session's one Chromium,
    disposed of afterwards; with ``--fresh-browser``, a Chromium launched for the test.
    A test marked ``popups`` gets a Chromium launched for it that does not block a
    page's pop-ups, as for a person who allowed them (a switch of the whole browser)."""
    popups = request.node.get_closest_marker("popups") is not None
    if shared_chromium is None or popups:
        flags = [LOCAL_NAMES, *(["--disable-popup-blocking"] if popups else [])]
        async with launch_browser(extra_args=flags) as launched:
            LAUNCHED_PROFILES.append(launched.user_data_dir)
            yield launched
        return
    async with shared_chromium.connect(tmp_path_factory.mktemp("browser")) as connected:
        yield connected


@pytest.fixture
async def page(browser: Browser) -> PageTarget:
    """A blank tab of the test's browser."""
    with trio.fail_after(30):
        return await browser.new_page()


@pytest.fixture
def corpus() -> Path:
    """The real-page corpus next to the repository (skips where it is absent)."""
    if not CORPUS.is_dir():
        pytest.skip(f"the page corpus is absent (expected at {CORPUS}); corpus tests skipped")
    return CORPUS


@pytest.fixture
async def pages_server(nursery: trio.Nursery) -> StaticServer:
    """A static server on 127.0.0.1 serving tests/pages."""
    server: StaticServer = await nursery.start(serve_static, TEST_PAGES)
    return server


@pytest.fixture
async def second_server(nursery: trio.Nursery) -> StaticServer:
    """Another static server of tests/pages: another port, so another origin."""
    server: StaticServer = await nursery.start(serve_static, TEST_PAGES)
    return server
