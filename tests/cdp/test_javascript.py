"""The page's JavaScript through `evaluate` and `call_on`, against a real Chromium."""

from __future__ import annotations

import pytest

from pycdp_bridge import (
    CDPError,
    JavaScriptError,
    ObjectRef,
    PageTarget,
    call_on,
    evaluate,
    protocol,
)
from tests.support.pages import page_url

pytestmark = pytest.mark.browser

_PAGE = "<!doctype html><title>JS</title><p id='p'>Hello <b>world</b></p>"


async def test_evaluate_returns_the_value(page: PageTarget) -> None:
    """A plain expression's JSON value comes back as Python data."""
    await page.navigate(page_url(_PAGE))
    value = await evaluate(page, "({title: document.title, n: [1, 2.5, null]})")
    assert value == {"title": "JS", "n": [1, 2.5, None]}


async def test_evaluate_awaits_a_promise(page: PageTarget) -> None:
    """With await_promise the settled value of a promise comes back, not the promise."""
    await page.navigate(page_url(_PAGE))
    settled = await evaluate(
        page, "new Promise((r) => setTimeout(() => r('late'), 20))", await_promise=True
    )
    pending = await evaluate(page, "new Promise(() => {})", return_by_value=False)
    assert settled == "late"
    assert (pending["type"], pending["className"]) == ("object", "Promise")


async def test_a_throwing_expression_is_a_javascript_error(page: PageTarget) -> None:
    """An exception, a thrown non-Error value and a rejected awaited promise all raise
    JavaScriptError carrying the page's text of what was thrown."""
    await page.navigate(page_url(_PAGE))
    with pytest.raises(JavaScriptError, match="TypeError: no such thing") as caught:
        await evaluate(page, "(() => { throw new TypeError('no such thing'); })()")
    assert caught.value.description.startswith("TypeError: no such thing")
    with pytest.raises(JavaScriptError, match="'plain string'"):
        await evaluate(page, "(() => { throw 'plain string'; })()")
    with pytest.raises(JavaScriptError, match="Error: refused"):
        await evaluate(page, "Promise.reject(new Error('refused'))", await_promise=True)


async def test_call_on_binds_this_and_passes_arguments(page: PageTarget) -> None:
    """call_on runs a function with `this` bound to a remote object, JSON arguments
    and remote objects (ObjectRef) as arguments, and awaits its promise."""
    await page.navigate(page_url(_PAGE))
    paragraph = await evaluate(page, "document.getElementById('p')", return_by_value=False)
    bold = await evaluate(page, "document.querySelector('b')", return_by_value=False)
    value = await call_on(
        page,
        paragraph["objectId"],
        "async function (tag, child) {"
        " return [this.id, tag, this.contains(child), child.textContent]; }",
        "P",
        ObjectRef(bold["objectId"]),
    )
    assert value == ["p", "P", True, "world"]


async def test_call_on_a_throwing_function_is_a_javascript_error(page: PageTarget) -> None:
    """A function that throws raises JavaScriptError; an object id the page does not
    know is the protocol's error (CDPError), not the page's."""
    await page.navigate(page_url(_PAGE))
    body = await evaluate(page, "document.body", return_by_value=False)
    with pytest.raises(JavaScriptError, match="RangeError: too far"):
        await call_on(page, body["objectId"], "function () { throw new RangeError('too far'); }")
    await page.execute(protocol.runtime_release_object(body["objectId"]))
    with pytest.raises(CDPError) as caught:
        await call_on(page, body["objectId"], "function () { return 1; }")
    assert not isinstance(caught.value, JavaScriptError)


async def test_evaluate_in_an_isolated_world(page: PageTarget) -> None:
    """With context_id the expression runs in that world: it sees the DOM, not the
    page's globals."""
    await page.navigate(page_url(_PAGE))
    await evaluate(page, "window.pageSecret = 42")
    tree = await page.execute(protocol.page_get_frame_tree())
    world = await page.execute(
        protocol.page_create_isolated_world(tree["frameTree"]["frame"]["id"], world_name="t")
    )
    seen = await evaluate(
        page,
        "[typeof window.pageSecret, document.title]",
        context_id=world["executionContextId"],
    )
    assert seen == ["undefined", "JS"]


async def test_call_on_in_an_isolated_world(page: PageTarget) -> None:
    """With no object and a context_id, call_on runs the function in that world on its
    arguments alone (remote objects of that world included), and a rejection there is
    JavaScriptError; naming both an object and a context, or neither, is refused."""
    await page.navigate(page_url(_PAGE))
    await evaluate(page, "window.pageSecret = 42")
    tree = await page.execute(protocol.page_get_frame_tree())
    world = await page.execute(
        protocol.page_create_isolated_world(tree["frameTree"]["frame"]["id"], world_name="t")
    )
    context = world["executionContextId"]
    bold = await evaluate(
        page, "document.querySelector('b')", context_id=context, return_by_value=False
    )
    seen = await call_on(
        page,
        None,
        "async function (n, node) { return [typeof window.pageSecret, n + 1, node.localName]; }",
        1,
        ObjectRef(bold["objectId"]),
        context_id=context,
    )
    assert seen == ["undefined", 2, "b"]
    with pytest.raises(JavaScriptError, match="Error: not here"):
        await call_on(
            page, None, "function () { throw new Error('not here'); }", context_id=context
        )
    with pytest.raises(ValueError, match="exactly one of object_id"):
        await call_on(page, None, "function () { return 1; }")
    with pytest.raises(ValueError, match="exactly one of object_id"):
        await call_on(page, bold["objectId"], "function () { return 1; }", context_id=context)
