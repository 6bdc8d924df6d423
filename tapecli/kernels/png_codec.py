"""PNG bytes as TensorFlow's EncodePng writes them (libpng 1.6 under it) and as DecodePng reads them.

Encoding: each row's filter is libpng's choice, the one of its five (None, Sub, Up, Average, Paeth; Sub and None
alone for a one-row image, Up and None alone for a one-column one) whose bytes, read as signed, have the least sum
of magnitudes (the first such); the filtered rows are deflated as libpng deflates them (memLevel 9, Z_FILTERED,
a window shrunk to the image's size, the zlib header then claiming the smallest window that holds it), or, at
compression 0, stored as zlib's deflate_stored stores rows fed one at a time (a block once its window holds a
window's worth); the stream is cut into IDAT chunks of 8,192 bytes. Decoding undoes the filters of an 8- or
16-bit grey, grey-alpha, RGB or RGBA image, not interlaced."""
from __future__ import annotations

import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOUR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}            # channels -> PNG colour type
_CHANNELS = {v: k for k, v in _COLOUR_TYPES.items()}
_IDAT_SIZE = 8192                                   # libpng's zlib output buffer: one IDAT chunk each
_MAX_STORED = 65535


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _predictions(rows: np.ndarray, bpp: int) -> tuple:
    """Each byte's left (a), up (b) and upper-left (c) neighbours, as int64 (zero outside the image)."""
    x = rows.astype(np.int64)
    b = np.vstack([np.zeros((1, x.shape[1]), np.int64), x[:-1]])
    a = np.zeros_like(x)
    c = np.zeros_like(x)
    a[:, bpp:] = x[:, :-bpp]
    c[:, bpp:] = b[:, :-bpp]
    return x, a, b, c


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    return np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))


def _filtered(rows: np.ndarray, bpp: int) -> tuple[bytes, list]:
    """The image data libpng deflates (each row its filter's type byte and bytes) and the filters allowed."""
    x, a, b, c = _predictions(rows, bpp)
    options = np.stack([x, x - a, x - b, x - (a + b) // 2, x - _paeth(a, b, c)]) % 256
    height, width = rows.shape[0], rows.shape[1] // bpp
    allowed = [k for k in range(5) if not (height == 1 and k >= 2) and not (width == 1 and k in (1, 3, 4))]
    scores = np.where(options < 128, options, 256 - options).sum(axis=2)[allowed]
    chosen = np.asarray(allowed)[np.argmin(scores, axis=0)]          # (the first least: libpng's strict <)
    picked = options[chosen, np.arange(height)].astype(np.uint8)
    return np.hstack([chosen.astype(np.uint8)[:, None], picked]).tobytes(), allowed


def _window_bits(size: int) -> int:
    """libpng's deflate window for ``size`` bytes of image data (png_deflate_claim)."""
    bits = 15
    if size <= 16384:
        half = 1 << (bits - 1)
        while size + 262 <= half:
            half >>= 1
            bits -= 1
    return max(bits, 9)         # (zlib makes a window of 256 one of 512)


def _claimed_window(stream: bytearray, size: int) -> None:
    """libpng's optimize_cmf: the zlib header's window the smallest that holds ``size`` bytes."""
    cmf = stream[0]
    if size > 16384 or (cmf & 0x0F) != 8 or (cmf & 0xF0) > 0x70:
        return
    info = cmf >> 4
    half = 1 << (info + 7)
    if size > half:
        return
    while True:
        half >>= 1
        info -= 1
        if not (info > 0 and size <= half):
            break
    stream[0] = cmf = (cmf & 0x0F) | (info << 4)
    flags = stream[1] & 0xE0
    stream[1] = flags + 0x1F - ((cmf << 8) + flags) % 0x1F


def _stored(data: bytes, row: int, bits: int) -> bytes:
    """zlib's deflate_stored of ``data`` fed a row at a time into an 8 KB output buffer (libpng's): the rows
    gather in the window, a block written whenever it holds a window's worth, the rest the last block."""
    header = zlib.compressobj(0, zlib.DEFLATED, bits, 9)
    head = (header.compress(b"") + header.flush())[:2]
    w_size = 1 << bits
    blocks, start, block_start = [], 0, 0
    for _ in range(0, len(data), row):
        waiting = row
        while waiting:
            room = 2 * w_size - start
            if waiting > room and block_start >= w_size:         # (the window slides)
                block_start -= w_size
                start -= w_size
                room += w_size
            taken = min(room, waiting)
            start += taken
            waiting -= taken
            if start - block_start >= min(_MAX_STORED, w_size):
                blocks.append(min(start - block_start, _MAX_STORED))
                block_start += blocks[-1]
    blocks.append(start - block_start)
    out, at = bytearray(head), 0
    for i, n in enumerate(blocks):
        out.append(1 if i == len(blocks) - 1 else 0)
        out += struct.pack("<HH", n, n ^ 0xFFFF) + data[at:at + n]
        at += n
    return bytes(out + struct.pack(">I", zlib.adler32(data)))


def encode(image: np.ndarray, level: int) -> bytes:
    """PNG bytes of an image [height, width, channels] of uint8 or uint16 (big-endian samples)."""
    height, width, channels = image.shape
    depth = 16 if image.dtype == np.uint16 else 8
    rows = (image.astype(">u2").view(np.uint8) if depth == 16 else image).reshape(height, -1)
    data, allowed = _filtered(rows, channels * depth // 8)
    bits = _window_bits(len(data))
    if level == 0:
        stream = bytearray(_stored(data, rows.shape[1] + 1, bits))
    else:
        deflate = zlib.compressobj(6 if level < 0 else level, zlib.DEFLATED, bits, 9,
                                   zlib.Z_FILTERED if allowed != [0] else zlib.Z_DEFAULT_STRATEGY)
        stream = bytearray(deflate.compress(data) + deflate.flush())
    _claimed_window(stream, len(data))
    png = SIGNATURE + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, _COLOUR_TYPES[channels], 0, 0, 0))
    png += b"".join(_chunk(b"IDAT", bytes(stream[i:i + _IDAT_SIZE])) for i in range(0, len(stream), _IDAT_SIZE))
    return png + _chunk(b"IEND", b"")


class Unreadable(ValueError):
    """Bytes that are no PNG tapecli reads (why, in words)."""


def decode(contents: bytes) -> np.ndarray:
    """The image [height, width, channels] of PNG bytes, uint8 or uint16 as the file's depth."""
    if not contents.startswith(SIGNATURE):
        raise Unreadable("Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required.")
    at, header, stream = len(SIGNATURE), None, bytearray()
    while at + 8 <= len(contents):
        size, kind = struct.unpack(">I4s", contents[at:at + 8])
        body = contents[at + 8:at + 8 + size]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            stream += body
        elif kind == b"IEND":
            break
        at += 12 + size
    if header is None:
        raise Unreadable("Invalid PNG header: no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    if colour not in _CHANNELS or depth not in (8, 16) or interlace:
        raise Unreadable(f"a PNG of colour type {colour}, bit depth {depth}{', interlaced' if interlace else ''}: "
                         "tapecli reads 8- and 16-bit grey, grey-alpha, RGB and RGBA images, not interlaced")
    channels = _CHANNELS[colour]
    bpp = channels * depth // 8
    stride = width * bpp
    try:
        raw = np.frombuffer(zlib.decompress(bytes(stream)), np.uint8)
    except zlib.error as e:
        raise Unreadable(f"Invalid PNG data: {e}") from None
    if raw.size < height * (stride + 1):
        raise Unreadable(f"Invalid PNG data, size {len(contents)}")
    lines = raw[:height * (stride + 1)].reshape(height, stride + 1)
    out = np.zeros((height, stride), np.int64)
    prev = np.zeros(stride, np.int64)
    for y in range(height):
        kind, line = lines[y, 0], lines[y, 1:].astype(np.int64)
        if kind in (0, 2):
            row = (line + (prev if kind == 2 else 0)) % 256
        elif kind == 1:
            row = np.cumsum(line.reshape(-1, bpp), axis=0).reshape(-1) % 256
        elif kind in (3, 4):
            row = line.copy()
            for i in range(0, stride, bpp):
                left = row[i - bpp:i] if i else np.zeros(bpp, np.int64)
                up = prev[i:i + bpp]
                guess = (left + up) // 2 if kind == 3 else _paeth(
                    left, up, prev[i - bpp:i] if i else np.zeros(bpp, np.int64))
                row[i:i + bpp] = (row[i:i + bpp] + guess) % 256
        else:
            raise Unreadable(f"Invalid PNG data: filter type {kind}")
        out[y] = prev = row
    samples = out.astype(np.uint8)
    if depth == 16:
        return samples.reshape(height, -1).view(">u2").astype(np.uint16).reshape(height, width, channels)
    return samples.reshape(height, width, channels)
