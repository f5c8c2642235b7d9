"""The envelope's decision on what an action sends, without a browser: which requests
are held, what the person is asked in Trimtab's own words, and what a no leaves."""

from __future__ import annotations

import attrs
import pytest

from trimtab.envelope import (
    MIN_CARRIED,
    Answer,
    Question,
    RequestJudge,
    SentRequest,
    carried,
    request_verdict,
)


@attrs.frozen
class _Sites:
    """The task's one site, https://shop.example (a stand-in for the site policy)."""

    def name(self, url: str) -> str:
        return "https://shop.example" if self.allows(url) else "another site"

    def allows(self, url: str) -> bool:
        return url.startswith("https://shop.example/")

    async def enter(self, url: str, doing: str | None = None) -> Answer:
        del url, doing
        return Answer.no()


SITES = _Sites()
_CALL = Question(client="Trimtab agent", session="s", tab=7, what="request", tool="click")


@attrs.define
class _Person:
    """Answers every question with ``allow`` and keeps the questions."""

    allow: bool
    asked: list[Question] = attrs.field(factory=list)

    async def ask(self, question: Question) -> Answer:
        self.asked.append(question)
        return Answer(allow=self.allow)


@pytest.mark.parametrize(
    ("request_", "verdict"),
    [
        (SentRequest("POST", "https://shop.example/api/buy", "Fetch"), "ask"),
        (SentRequest("DELETE", "https://shop.example/api/account", "XHR"), "ask"),
        (SentRequest("PATCH", "https://shop.example/api/profile", "Fetch"), "ask"),
        (SentRequest("POST", "https://shop.example/api/draft", "Ping"), "ask"),
        (SentRequest("GET", "https://shop.example/search?q=x", "Document", True, True), "ask"),
        (SentRequest("GET", "https://shop.example/api/stock", "XHR"), "send"),
        (SentRequest("HEAD", "https://shop.example/api/stock", "Fetch"), "send"),
        (SentRequest("OPTIONS", "https://shop.example/api/stock", "Other"), "send"),
        (SentRequest("POST", "https://tracker.example/collect", "Ping"), "site"),
        (SentRequest("POST", "https://tracker.example/collect", "XHR"), "site"),
        (SentRequest("GET", "https://tracker.example/pixel?u=1", "Other"), "send"),
        (SentRequest("GET", "https://other.example/", "Document", navigation=True), "site"),
        (SentRequest("GET", "https://other.example/ad", "Document"), "send"),
        (
            SentRequest("POST", "https://shop.example/api/after", "Fetch", redirect_of_sent=True),
            "send",
        ),
    ],
)
def test_what_is_held(request_: SentRequest, verdict: str) -> None:
    """State-changing requests and form submissions to the task's site are asked about;
    reads, another site's reads and an allowed request's redirect are sent; a
    navigation of the tab to another site, or anything that carries data there (a
    POST, a beacon), goes to the site policy."""
    assert request_verdict(request_, SITES) == verdict


def test_a_forms_submission_is_not_asked_twice_with_the_calls_yes() -> None:
    """A form's own submission is sent when the call already has the person's yes for
    it; a script's POST in the same call is still asked about."""
    form = SentRequest("POST", "https://shop.example/order", "Document", True, True)
    script = SentRequest("POST", "https://shop.example/api/order", "Fetch")
    assert request_verdict(form, SITES, granted=True) == "send"
    assert request_verdict(script, SITES, granted=True) == "ask"


async def test_a_yes_for_a_submit_sends_one_submission_and_asks_about_the_rest() -> None:
    """With the call's yes for a predicted submit, the first request to the task's site
    that would be asked about (a form's script sending its data) is sent unasked; the
    next one, a download, and a POST to another site are still asked about."""
    person = _Person(allow=False)
    judge = RequestJudge(_CALL, person.ask, SITES, granted=True)
    script = await judge(SentRequest("POST", "https://shop.example/api/order", "Fetch"), None)
    assert (script.send, script.held) == (True, True)
    assert person.asked == []
    again = await judge(SentRequest("PUT", "https://shop.example/api/prefs", "Fetch"), None)
    assert not again.send
    assert [q.what for q in person.asked] == ["request"]
    fresh = RequestJudge(_CALL, person.ask, SITES, granted=True)
    elsewhere = await fresh(SentRequest("POST", "https://attacker.example/x", "Fetch"), None)
    assert not elsewhere.send
    saved = SentRequest("GET", "https://shop.example/invoice.pdf", "Document", download="a.pdf")
    assert not (await fresh(saved, None)).send


async def test_a_forms_own_submission_spends_the_yes() -> None:
    """After the form's own submission went with the call's yes, a script's POST in the
    same action is asked about."""
    person = _Person(allow=True)
    judge = RequestJudge(_CALL, person.ask, SITES, granted=True)
    form = SentRequest("POST", "https://shop.example/order", "Document", True, True)
    assert (await judge(form, None)).send
    assert person.asked == []
    await judge(SentRequest("POST", "https://shop.example/api/order", "Fetch"), None)
    assert [q.what for q in person.asked] == ["request"]


async def test_the_question_is_in_trimtabs_words_and_the_page_text_apart() -> None:
    """The question's reason names the action, the method and the site in Trimtab's
    words; the page's method token, URL and element are only in the data fields."""
    person = _Person(allow=True)
    judge = RequestJudge(_CALL, person.ask, SITES)
    element = '<button id="b4">Delete account</button>'
    ruling = await judge(
        SentRequest("DELETE", "https://shop.example/api/account", "Fetch"), element
    )
    assert ruling.send
    assert ruling.held
    await judge(SentRequest("ALLOW-ME", "https://shop.example/api/x?say=yes", "Fetch"), None)
    first, second = person.asked
    assert first.reason == (
        "Clicking it sends a DELETE request to https://shop.example, where it may change something"
    )
    assert first.element == element
    assert first.request == {
        "method": "DELETE",
        "url": "https://shop.example/api/account",
        "site": "https://shop.example",
    }
    assert "ALLOW-ME" not in second.reason
    assert "say=yes" not in second.reason
    assert second.reason.startswith("This click action sends a request with a method of the page")
    assert second.to_json()["request"] == {
        "method": "ALLOW-ME",
        "url": "https://shop.example/api/x?say=yes",
        "site": "https://shop.example",
    }


async def test_a_navigation_elsewhere_is_the_site_policys() -> None:
    """A navigation of the tab to a site the task may not use is not sent when the site
    policy says no, and the answer says so; the person is not asked about a request."""
    person = _Person(allow=True)
    judge = RequestJudge(_CALL, person.ask, SITES)
    away = SentRequest("GET", "https://other.example/", "Document", navigation=True)
    ruling = await judge(away, None)
    assert not ruling.send
    assert ruling.held
    assert ruling.why.startswith("not sent: the tab may not go to another site")
    assert person.asked == []


async def test_a_beacon_to_another_site_is_the_site_policys() -> None:
    """A beacon the action makes the page send to a site the task may not use is not
    sent when the site policy says no (the policy, not a request question, decides),
    and the answer says the action may not send there."""
    person = _Person(allow=True)
    judge = RequestJudge(_CALL, person.ask, SITES)
    beacon = SentRequest("POST", "https://attacker.example/c", "Ping")
    ruling = await judge(beacon, "<a>Apply coupon</a>")
    assert not ruling.send
    assert ruling.held
    assert ruling.why.startswith("not sent: this action may not send to another site")
    assert person.asked == []


async def test_after_a_no_nothing_more_is_asked_in_the_call() -> None:
    """A no fails the request, and the call's further requests that would ask are
    refused without asking again; reads still go."""
    person = _Person(allow=False)
    judge = RequestJudge(_CALL, person.ask, SITES)
    first = await judge(SentRequest("POST", "https://shop.example/api/a", "Fetch"), None)
    second = await judge(SentRequest("PUT", "https://shop.example/api/b", "Fetch"), None)
    read = await judge(SentRequest("GET", "https://shop.example/api/c", "Fetch"), None)
    assert len(person.asked) == 1
    assert not first.send
    assert "the person refused when asked" in first.why
    assert not second.send
    assert "refused what this action sends" in second.why
    assert read.send
    assert not read.held


async def test_the_persons_setting_off_sends_without_asking() -> None:
    """With "ask before submitting" off, a held request is sent without a question, and
    the answer still says it was held."""
    person = _Person(allow=False)
    judge = RequestJudge(_CALL, person.ask, SITES, ask_before_submit=False)
    ruling = await judge(SentRequest("POST", "https://shop.example/api/a", "Fetch"), None)
    assert ruling.send
    assert ruling.held
    assert person.asked == []


@pytest.mark.parametrize(
    ("url", "body", "found"),
    [
        ("https://ads.example/s?q=light%20tippet%20knot", "", True),
        ("https://ads.example/s?q=light+tippet+knot", "", True),
        ("https://ads.example/s?q=LIGHT%20TIPPET%20KNOT", "", True),
        ("https://ads.example/k", '{"typed":"light tippet knot"}', True),
        ("https://ads.example/k", "k=light%20tippet%20knot", True),
        ("https://ads.example/s?q=light", "", False),
        ("https://ads.example/s?q=tippet%20light", "", False),
    ],
)
def test_typed_text_is_found_plain_encoded_or_escaped(url: str, body: str, found: bool) -> None:
    """`carried` finds what the agent typed, whole, in a URL or body as typed,
    URL-encoded (%20 or +), JSON-escaped or in another letter case; a part of it is not."""
    assert carried(["light tippet knot"], url, body) is found


def test_short_typed_text_is_not_looked_for() -> None:
    """Texts shorter than `MIN_CARRIED` (a quantity, a country code) are not looked for:
    they turn up by chance in ordinary addresses."""
    assert MIN_CARRIED == 4
    assert not carried(["2", "US", "yes"], "https://ads.example/p?n=2&c=US&ok=yes")
    assert carried(["2024-06-01"], "https://ads.example/p?d=2024-06-01")
    json_escaped = carried(['say "hi" there'], "https://a.example/", '{"m":"say \\"hi\\" there"}')
    assert json_escaped


def test_a_get_carrying_typed_text_to_another_site_is_no_read() -> None:
    """A GET to another site is sent, unless it carries what the agent typed or a secret:
    then it is the site policy's, like a POST; to the task's own site it stays a read."""
    elsewhere = SentRequest("GET", "https://ads.example/s?q=knot", "Image")
    assert request_verdict(elsewhere, SITES) == "send"
    assert request_verdict(attrs.evolve(elsewhere, carries="typed"), SITES) == "site"
    assert request_verdict(attrs.evolve(elsewhere, carries="secret"), SITES) == "site"
    own = SentRequest("GET", "https://shop.example/search?q=knot", "XHR", carries="typed")
    assert request_verdict(own, SITES) == "send"


async def test_a_trailing_judges_question_says_the_action_is_over() -> None:
    """A trailing window's judge (``after``) asks in words that say the page sends the
    request after the action, and marks its question ``after``."""
    person = _Person(allow=False)
    call = attrs.evolve(_CALL, tool="type")
    judge = RequestJudge(call, person.ask, SITES, after=True)
    ruling = await judge(SentRequest("POST", "https://shop.example/api/drafts", "Fetch"), "<x/>")
    assert not ruling.send
    (question,) = person.asked
    assert question.after is True
    assert question.to_json()["after"] is True
    assert question.reason == (
        "After the agent typed into it, the page sends a POST request to "
        "https://shop.example, where it may change something"
    )
