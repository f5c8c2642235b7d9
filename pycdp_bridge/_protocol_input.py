"""CDP commands of what a person does with the page: the pointer, the keys, the window
(Input, Emulation). Part of `pycdp_bridge.protocol`, which re-exports them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ._protocol_base import Command, Empty, call

if TYPE_CHECKING:
    from cdp_use.cdp.emulation.commands import (
        SetDeviceMetricsOverrideParameters,
        SetFocusEmulationEnabledParameters,
    )
    from cdp_use.cdp.input.commands import (
        DispatchKeyEventParameters,
        DispatchMouseEventParameters,
        InsertTextParameters,
    )

__all__ = [
    "KeyEventType",
    "MouseButton",
    "MouseEventType",
    "emulation_set_device_metrics_override",
    "emulation_set_focus_emulation_enabled",
    "input_dispatch_key_event",
    "input_dispatch_mouse_event",
    "input_insert_text",
]


MouseEventType = Literal["mousePressed", "mouseReleased", "mouseMoved", "mouseWheel"]
MouseButton = Literal["none", "left", "middle", "right", "back", "forward"]
KeyEventType = Literal["keyDown", "keyUp", "rawKeyDown", "char"]


def input_dispatch_mouse_event(
    type_: MouseEventType,
    x: float,
    y: float,
    *,
    button: MouseButton = "none",
    click_count: int = 0,
    delta_x: float | None = None,
    delta_y: float | None = None,
    buttons: int | None = None,
) -> Command[Empty]:
    params: DispatchMouseEventParameters = {
        "type": type_,
        "x": x,
        "y": y,
        "button": button,
        "clickCount": click_count,
    }
    if buttons is not None:
        params["buttons"] = buttons  # held buttons (1: left), so moves read as a drag
    if delta_x is not None:
        params["deltaX"] = delta_x
    if delta_y is not None:
        params["deltaY"] = delta_y
    return (yield from call("Input.dispatchMouseEvent", params))


def input_dispatch_key_event(
    type_: KeyEventType,
    *,
    key: str | None = None,
    code: str | None = None,
    text: str | None = None,
    windows_virtual_key_code: int | None = None,
    modifiers: int = 0,
) -> Command[Empty]:
    params: DispatchKeyEventParameters = {"type": type_, "modifiers": modifiers}
    if key is not None:
        params["key"] = key
    if code is not None:
        params["code"] = code
    if text is not None:
        params["text"] = text
    if windows_virtual_key_code is not None:
        params["windowsVirtualKeyCode"] = windows_virtual_key_code
    return (yield from call("Input.dispatchKeyEvent", params))


def input_insert_text(text: str) -> Command[Empty]:
    params: InsertTextParameters = {"text": text}
    return (yield from call("Input.insertText", params))


def emulation_set_device_metrics_override(
    width: int, height: int, *, device_scale_factor: float = 1.0, mobile: bool = False
) -> Command[Empty]:
    params: SetDeviceMetricsOverrideParameters = {
        "width": width,
        "height": height,
        "deviceScaleFactor": device_scale_factor,
        "mobile": mobile,
    }
    return (yield from call("Emulation.setDeviceMetricsOverride", params))


def emulation_set_focus_emulation_enabled(enabled: bool) -> Command[Empty]:
    params: SetFocusEmulationEnabledParameters = {"enabled": enabled}
    return (yield from call("Emulation.setFocusEmulationEnabled", params))
