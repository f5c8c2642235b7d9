"""The driver: acting on a page the way a person does, one element at a time.

Element -> point -> input. `locate` turns an element id of the snapshots into the
live element (a fresh capture decides when the id no longer resolves) and
`element_info` reads what it is and may do; `aim_at` scrolls it into view and picks a
point of its visible box that the browser's own hit test gives to it (`Covered`
when something is drawn over all of it). Pressing (`click_element`, `pointer_onto`,
`press_element`: ``_press``) tests that point again once the page reacted to the
pointer and to the press, re-aims at an element that moved, and has a witness in
Trimtab's own world watch the pointer stay on it for a frame and say where each
press went; a pressed button is released even
when the call fails or is cancelled (``_button``). The keyboard (``_keyboard``),
fields typed into, set as their picker sets them or chosen in (``_fields``),
drags and text selections (``_drag``), and an item of a sortable list dragged before
or after another, checked in the page's order (``_place``), are built on the same
aim; so is choosing on a custom drop-down drawn over a hidden <select> (``_dropdown``:
click its face, then the item of its list that shows the option, and check the select
took it). Whatever would
make the driver act on another element than the one asked for raises `Refusal`, with
a message for the model.

The submit prediction (``_consent``) is here too, since it reads the page: the facts
of an element (in an isolated world of its frame, with the listeners the browser
reports on its event path, ``_listeners``: also read to type key by key and to say
whether Escape may close a covering pop-up) and the pure rules that say why acting on it may submit
or commit something; the call's `CallContext.require` stops an action
(`ConsentNeeded`) before its first input when it needs a yes the person has not given.

`CallContext` is one live call, made by the one place that runs a call
(`trimtab.tools.run_tool`, which the browser calls with the person's yes and the
request guard) and handed to the handler and down to here: the tab, whether the person
said yes to this one call, the request guard (and the element named for its
questions), and the remote objects to release once the call ends. The page-side scripts are the
``.js`` files of ``js/`` (``_scripts``), with the shared helpers they ask for
(`trimtab.tab.page_script`). The tools (`trimtab.tools`) are the catalogue built on
this: each tool's spec and a short handler that calls the driver.

May import `trimtab.tab`, `trimtab.pipeline` and `pycdp_bridge`; nothing else of the
host.
"""

from ._button import ButtonDown, button_down
from ._consent import (
    CommitFacts,
    ConsentKind,
    ConsentNeeded,
    DownloadReason,
    EvaluateReason,
    FormReason,
    PredictedForm,
    SecretReason,
    click_reason,
    control_change_reason,
    dialog_element,
    dialog_reason,
    key_reason,
    secret_reason,
    submit_after_typing_reason,
)
from ._context import CallContext
from ._drag import (
    Goal,
    Grip,
    aim_at_grip,
    aim_by_offset,
    aim_onto_goal,
    drag_along,
    drag_select,
    resized_note,
)
from ._dropdown import NotChosen, choose_on_face, face_change_reason, stood_for
from ._element import (
    OBJECT_GROUP,
    Aim,
    Box,
    Covered,
    ElementInfo,
    Located,
    Point,
    Refusal,
    aim_at,
    aim_in_frame,
    element_info,
    locate,
    locate_with_info,
    reaches,
    scroll_into_view,
    scroll_position,
    secret_of,
    session_offsets,
    target_point,
    viewport_size,
    wheel,
)
from ._fields import (
    NoFocus,
    choose,
    enabled_element,
    field_value,
    focused_enter_submits,
    is_connected,
    is_picker,
    no_reason,
    pick,
    point_and_consent,
    refuse_unchecking_radio,
    still_not,
    type_into,
)
from ._gather import gather
from ._keyboard import MODIFIER_BITS, KeyDef, key_press, parse_key
from ._naming import cover_description, describe
from ._place import PLACES, Place, drag_onto
from ._press import PageLeft, click_element, pointer_onto, press_element
from ._quote import extend_selection, locate_quote, page_selection

__all__ = [
    "MODIFIER_BITS",
    "OBJECT_GROUP",
    "PLACES",
    "Aim",
    "Box",
    "ButtonDown",
    "CallContext",
    "CommitFacts",
    "ConsentKind",
    "ConsentNeeded",
    "Covered",
    "DownloadReason",
    "ElementInfo",
    "EvaluateReason",
    "FormReason",
    "Goal",
    "Grip",
    "KeyDef",
    "Located",
    "NoFocus",
    "NotChosen",
    "PageLeft",
    "Place",
    "Point",
    "PredictedForm",
    "Refusal",
    "SecretReason",
    "aim_at",
    "aim_at_grip",
    "aim_by_offset",
    "aim_in_frame",
    "aim_onto_goal",
    "button_down",
    "choose",
    "choose_on_face",
    "click_element",
    "click_reason",
    "control_change_reason",
    "cover_description",
    "describe",
    "dialog_element",
    "dialog_reason",
    "drag_along",
    "drag_onto",
    "drag_select",
    "element_info",
    "enabled_element",
    "extend_selection",
    "face_change_reason",
    "field_value",
    "focused_enter_submits",
    "gather",
    "is_connected",
    "is_picker",
    "key_press",
    "key_reason",
    "locate",
    "locate_quote",
    "locate_with_info",
    "no_reason",
    "page_selection",
    "parse_key",
    "pick",
    "point_and_consent",
    "pointer_onto",
    "press_element",
    "reaches",
    "refuse_unchecking_radio",
    "resized_note",
    "scroll_into_view",
    "scroll_position",
    "secret_of",
    "secret_reason",
    "session_offsets",
    "still_not",
    "stood_for",
    "submit_after_typing_reason",
    "target_point",
    "type_into",
    "viewport_size",
    "wheel",
]
