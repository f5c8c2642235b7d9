"""`trimtab inspect`, the command behind `make demo`, run as a user runs it: a process
that starts its own headless Chromium and prints XML on stdout, figures on stderr."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from tests.support.pages import page_url, parse_xml
from tests.support.xmltree import xp, xp_strings

pytestmark = pytest.mark.browser

DEMO = Path(__file__).resolve().parents[2] / "host" / "demo" / "outdoor-shop.html"
TIMEOUT = 90


async def inspect(*args: str) -> subprocess.CompletedProcess[bytes]:
    """Run `trimtab inspect ARGS` to its end, capturing both streams."""
    command = [sys.executable, "-c", "import sys, trimtab.cli as c; sys.exit(c.main())"]
    with trio.fail_after(TIMEOUT):
        return await trio.run_process(
            [*command, "inspect", *args], capture_stdout=True, capture_stderr=True, check=False
        )


async def test_demo_page_prints_xml_and_its_figures() -> None:
    """The demo page comes out as one well-formed baseline, its figures on stderr only,
    with where its tokens go: parts that add up to its count."""
    done = await inspect(str(DEMO), "--stats")
    assert done.returncode == 0, done.stderr.decode()
    page = parse_xml(done.stdout.decode())
    assert page.tag == "page"
    assert page.get("snapshot") == "baseline"
    assert xp(page, "//region[@name='main']//button")
    figures = done.stderr.decode()
    assert "kind=baseline tokens=" in figures
    assert "visible text=" in figures
    assert "tokens=" not in done.stdout.decode()
    counted = re.search(r"kind=baseline tokens=(\d+)", figures)
    assert counted is not None, figures
    tokens = int(counted[1])
    line = re.search(r"our tokens: (.*)", figures)
    assert line is not None, figures
    parts = dict(re.findall(r"(\w+) (\d+) \(\d+%\)", line[1]))
    assert set(parts) == {"text", "ids", "tags", "attributes", "regions", "whitespace"}
    assert abs(sum(map(int, parts.values())) - tokens) <= 3, (parts, tokens)
    assert int(parts["text"]) > 0
    assert int(parts["ids"]) > 0
    assert re.search(r"markup \(tags, ids, attributes\) by element: \w+ \d+ \(\d+x\)", figures)


async def test_steps_share_one_tab_session_and_dedup_can_be_switched_off() -> None:
    """Two pages of one site print as one document; the second collapses the shared nav,
    except with --no-dedup."""
    pages = [
        page_url(
            f"<!doctype html><title>{title}</title><nav aria-label='Site'>"
            "<a href='/a'>Alpha</a> <a href='/b'>Beta</a></nav>"
            f"<main><h1>{title}</h1></main>"
        )
        for title in ("One", "Two")
    ]
    deduped = await inspect(*pages)
    plain = await inspect(*pages, "--no-dedup", "--no-trim")
    for done in (deduped, plain):
        assert done.returncode == 0, done.stderr.decode()
    both = parse_xml(deduped.stdout.decode())
    assert both.tag == "trimtab"
    assert both.get("steps") == "2"
    assert xp_strings(both, "page[2]/region[@unchanged='true']/@name") == ["nav"]
    assert xp(parse_xml(plain.stdout.decode()), "//region[@unchanged]") == []


async def test_json_format_carries_xml_and_stats() -> None:
    """--format json prints one record per page with the XML and its figures."""
    done = await inspect(str(DEMO), "--format", "json")
    assert done.returncode == 0, done.stderr.decode()
    [record] = json.loads(done.stdout)
    assert parse_xml(record["xml"]).tag == "page"
    assert record["stats"]["kind"] == "baseline"
    assert record["stats"]["tokens"] > 0


async def serve_stalling(*, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    """Accept connections on 127.0.0.1 and never answer; reports the origin when ready."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]

    async def hold(stream: trio.SocketStream) -> None:
        async with stream:
            await trio.sleep_forever()

    task_status.started(f"http://127.0.0.1:{port}")
    await trio.serve_listeners(hold, listeners)


@pytest.fixture
async def stalling_origin(nursery: trio.Nursery) -> str:
    """An origin that accepts connections and never answers."""
    origin: str = await nursery.start(serve_stalling)
    return origin


async def test_a_page_that_never_finishes_loading_is_shown_as_it_is(
    stalling_origin: str,
) -> None:
    """When the load event does not come within --timeout, the page is still shown, with
    a warning on stderr."""
    html = (
        "<!doctype html><title>Stalled</title><main><h1>Still here</h1>"
        f"<img src='{stalling_origin}/never.png' alt='never'></main>"
    )
    done = await inspect(page_url(html), "--timeout", "2")
    assert done.returncode == 0, done.stderr.decode()
    assert "was still loading after 2 s" in done.stderr.decode()
    assert "Still here" in done.stdout.decode()


async def test_dialogs_the_page_opens_are_answered_and_reported() -> None:
    """An alert while the page loads is answered OK and named on stderr; the page that
    follows it is shown."""
    html = (
        "<!doctype html><title>Alerting</title><main><p>Before</p>"
        "<script>alert('Welcome <back>')</script><p>After the alert</p></main>"
    )
    done = await inspect(page_url(html), "--timeout", "20")
    assert done.returncode == 0, done.stderr.decode()
    assert "opened a dialog (alert: 'Welcome <back>'); answered OK" in done.stderr.decode()
    assert "After the alert" in done.stdout.decode()


async def test_a_page_stuck_in_a_script_is_a_clear_error() -> None:
    """A page whose script never yields is reported after --timeout, exit code 2, and the
    command does not hang."""
    html = (
        "<!doctype html><title>Stuck</title><p>Stuck</p>"
        "<script>setTimeout(() => { while (true); }, 0)</script>"
    )
    done = await inspect(page_url(html), "--timeout", "2")
    assert done.returncode == 2
    assert "did not answer within 2 s (a script on it may be stuck)" in done.stderr.decode()
    assert b"Traceback" not in done.stderr


async def test_unreachable_and_missing_pages_are_clear_errors(tmp_path: Path) -> None:
    """A page that cannot load and a file that does not exist end with one clear line
    and a failing exit code, never a traceback."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    await listeners[0].aclose()  # nothing listens there any more
    refused = await inspect(f"http://127.0.0.1:{port}/")
    missing = await inspect(str(tmp_path / "nope.html"))
    assert refused.returncode == 2
    assert "ERR_CONNECTION_REFUSED" in refused.stderr.decode()
    assert missing.returncode != 0
    assert "no such file or URL" in missing.stderr.decode()
    for done in (refused, missing):
        assert b"Traceback" not in done.stderr
        assert done.stdout == b""
