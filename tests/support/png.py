"""Just enough PNG decoding to compare screenshots pixel by pixel (8-bit RGB/RGBA)."""

from __future__ import annotations

import struct
import zlib

import attrs

__all__ = ["Image", "decode_png"]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {2: 3, 6: 4}  # colour type → samples per pixel


@attrs.frozen
class Image:
    """Decoded pixels: `rows[y][x]` is an (r, g, b) tuple."""

    width: int
    height: int
    rows: tuple[tuple[tuple[int, int, int], ...], ...]

    def changed_share(self, other: Image, tolerance: int = 8) -> float:
        """The share of pixels whose colour differs from `other` by more than `tolerance`."""
        if (self.width, self.height) != (other.width, other.height):
            raise ValueError(
                f"images differ in size: {self.width}x{self.height} vs {other.width}x{other.height}"
            )
        changed = 0
        for row, other_row in zip(self.rows, other.rows, strict=True):
            for a, b in zip(row, other_row, strict=True):
                if max(abs(a[0] - b[0]), abs(a[1] - b[1]), abs(a[2] - b[2])) > tolerance:
                    changed += 1
        return changed / max(1, self.width * self.height)


def decode_png(data: bytes) -> Image:
    """Decode a non-interlaced 8-bit RGB or RGBA PNG (what Chromium's screenshots are)."""
    if not data.startswith(_SIGNATURE):
        raise ValueError("not a PNG: the signature is missing")
    position = len(_SIGNATURE)
    header: tuple[int, ...] = ()
    idat = bytearray()
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in _CHANNELS or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}")
    channels = _CHANNELS[colour]
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    previous = bytearray(stride)
    rows: list[tuple[tuple[int, int, int], ...]] = []
    for y in range(height):
        start = y * (stride + 1)
        kind_byte = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        _unfilter(kind_byte, line, previous, channels)
        rows.append(tuple((line[x], line[x + 1], line[x + 2]) for x in range(0, stride, channels)))
        previous = line
    return Image(width, height, tuple(rows))


def _unfilter(kind: int, line: bytearray, previous: bytearray, bpp: int) -> None:
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        up = previous[i]
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            upper_left = previous[i - bpp] if i >= bpp else 0
            estimate = left + up - upper_left
            pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - upper_left)
            best = left if pa <= pb and pa <= pc else (up if pb <= pc else upper_left)
            line[i] = (line[i] + best) & 0xFF
        elif kind != 0:
            raise ValueError(f"unknown PNG filter type {kind}")
