"""Element ids cost one token each: the table they come from and how a page draws on it.

Sans-I/O: `assign_eids` on control facts, counted with the project's o200k counter.
"""

from __future__ import annotations

import re

from trimtab.pipeline import _eids, count_tokens
from trimtab.pipeline._build import ControlFacts
from trimtab.pipeline._tokens import is_one_token


def facts(n: int, *, name: str = "Link") -> list[ControlFacts]:
    """`n` links told apart by their names and targets."""
    return [
        ControlFacts(k, "link", f"{name} {k}", f"/page/{k}", ("main",), "", ()) for k in range(n)
    ]


def test_every_one_token_id_is_one_token_and_no_word() -> None:
    """The table holds 2 to 4 lower-case letters, each one token alone and after
    `="` or a line break, and none is a word the vocabulary knows after a space."""
    table = _eids._one_token_ids()
    assert len(table) == len(set(table)) > 5000
    for eid in table:
        assert re.fullmatch(r"[a-z]{2,4}", eid), eid
        assert is_one_token(eid), eid
        assert not is_one_token(" " + eid), eid
        assert not is_one_token(" " + eid.capitalize()), eid
    for eid in table[:: len(table) // 50]:
        # `<a`, ` id`, `="`, the id, `">`; the line break, the id, ` Compare`.
        assert count_tokens(f'<a id="{eid}">') == 5, eid
        assert count_tokens(f"\n{eid} Compare") == 3, eid


def test_a_page_of_controls_gets_unique_one_token_ids() -> None:
    """Up to half the table's size of controls, every id is drawn from the table,
    all distinct, and the same facts give the same ids."""
    many = len(_eids._one_token_ids()) // 2
    eids = _eids.assign_eids(facts(many), many)
    assert len(set(eids)) == many
    table = set(_eids._one_token_ids())
    assert all(eid in table for eid in eids)
    assert _eids.assign_eids(facts(many), many) == eids


def test_alike_controls_still_get_distinct_one_token_ids() -> None:
    """Twenty links of the same name and target (no heading to tell them apart) get
    twenty different one-token ids."""
    same = [ControlFacts(k, "link", "Add to cart", "/cart", ("main",), "", ()) for k in range(20)]
    eids = _eids.assign_eids(same, len(same))
    assert len(set(eids)) == 20
    assert all(is_one_token(eid) for eid in eids)


def test_more_controls_than_half_the_table_take_three_characters() -> None:
    """A page with more controls than half the table takes ids of a letter and two
    base-36 digits, as before, so that collisions stay rare."""
    many = len(_eids._one_token_ids()) // 2 + 1
    eids = _eids.assign_eids(facts(many), many)
    assert len(set(eids)) == many
    assert all(re.fullmatch(r"[a-z][a-z0-9]{2}", eid) for eid in eids)


def test_an_id_reserved_for_a_node_stays_whatever_the_table() -> None:
    """A node keeps the id issued for it before (an old three-character one too),
    and no other control takes it."""
    links = facts(10)
    first = _eids.assign_eids(links, 10)
    reserved = {"k3x": 100, first[3]: 103}
    nodes = [100 + k for k in range(10)]
    again = _eids.assign_eids(links, 10, reserved=reserved, nodes=nodes)
    assert again[0] == "k3x"
    assert again[3] == first[3]
    assert len(set(again)) == 10
