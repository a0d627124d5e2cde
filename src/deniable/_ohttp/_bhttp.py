"""Binary HTTP messages (RFC 9292), known-length framing: what an Oblivious HTTP request carries.

A request is the framing indicator ``0``, then its control data (method,
scheme, authority, path: each a length-prefixed string), a field section
(the headers), the content and a trailer section, each prefixed by its
length; a response is the indicator ``1``, any informational (1xx)
responses, then the final status and the same three sections. Lengths and
the status are QUIC variable-length integers (RFC 9000, Section 16): the two
high bits of the first byte give the size (1, 2, 4 or 8 bytes).

:func:`encode_request` and :func:`encode_response` leave out trailing empty
sections, as RFC 9292 Section 3.8 allows (so a bare ``200`` is ``01 40c8``,
RFC 9458 Appendix A's response); the decoders read a truncated message as one
whose missing sections are empty, and accept zero padding after it. The
indeterminate-length framing (indicators 2 and 3) is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from deniable.errors import DeniableError

__all__ = ["BinaryRequest", "BinaryResponse", "BHTTPError", "encode_request", "decode_request",
           "encode_response", "decode_response", "encode_varint"]

Fields = tuple[tuple[bytes, bytes], ...]

_MAX_VARINT = (1 << 62) - 1


class BHTTPError(DeniableError, ValueError):
    """A malformed Binary HTTP message (the message says which part)."""


@dataclass(frozen=True)
class BinaryRequest:
    """An HTTP request: control data, header fields (lower-case names), content."""

    method: str
    path: str
    scheme: str = "https"
    authority: str = ""
    headers: Fields = ()
    content: bytes = b""

    def header(self, name: str) -> str | None:
        """The first value of the header ``name`` (case-insensitive), or None."""
        wanted = name.lower().encode()
        return next((v.decode("latin-1") for k, v in self.headers if k == wanted), None)


@dataclass(frozen=True)
class BinaryResponse:
    """An HTTP response: final status, header fields (lower-case names), content."""

    status: int
    headers: Fields = ()
    content: bytes = b""
    informational: tuple[tuple[int, Fields], ...] = field(default=())

    def header(self, name: str) -> str | None:
        """The first value of the header ``name`` (case-insensitive), or None."""
        wanted = name.lower().encode()
        return next((v.decode("latin-1") for k, v in self.headers if k == wanted), None)


def encode_varint(value: int) -> bytes:
    """``value`` as a QUIC variable-length integer, in the fewest bytes."""
    if not 0 <= value <= _MAX_VARINT:
        raise BHTTPError(f"integer {value} is outside 0..2**62-1")
    for size, prefix in ((1, 0x00), (2, 0x40), (4, 0x80), (8, 0xC0)):
        if value < 1 << (8 * size - 2):
            return (value | prefix << (8 * size - 8)).to_bytes(size, "big")
    raise AssertionError("unreachable")  # pragma: no cover


def _chunk(data: bytes) -> bytes:
    return encode_varint(len(data)) + data


def _fields(fields: Fields) -> bytes:
    return _chunk(b"".join(_chunk(name.lower()) + _chunk(value) for name, value in fields))


def _trimmed(sections: list[bytes]) -> bytes:
    """The sections, trailing empty ones (a zero length) left out (RFC 9292 Section 3.8)."""
    while sections and sections[-1] == b"\x00":
        sections.pop()
    return b"".join(sections)


def encode_request(request: BinaryRequest) -> bytes:
    """``request`` in known-length framing, trailing empty sections left out."""
    control = b"".join(_chunk(part.encode()) for part in
                       (request.method, request.scheme, request.authority, request.path))
    return b"\x00" + control + _trimmed([_fields(request.headers), _chunk(request.content), b"\x00"])


def encode_response(response: BinaryResponse) -> bytes:
    """``response`` in known-length framing, trailing empty sections left out."""
    informational = b"".join(encode_varint(status) + _fields(fields) for status, fields in response.informational)
    return (b"\x01" + informational + encode_varint(response.status)
            + _trimmed([_fields(response.headers), _chunk(response.content), b"\x00"]))


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def done(self) -> bool:
        """Nothing left but zero padding."""
        return not any(self.data[self.at:])

    def varint(self, what: str) -> int:
        if self.at >= len(self.data):
            raise BHTTPError(f"the message ends inside {what}")
        size = 1 << (self.data[self.at] >> 6)
        raw = self.data[self.at:self.at + size]
        if len(raw) < size:
            raise BHTTPError(f"the message ends inside {what}")
        self.at += size
        return int.from_bytes(raw, "big") & ((1 << (8 * size - 2)) - 1)

    def chunk(self, what: str) -> bytes:
        n = self.varint(f"the length of {what}")
        raw = self.data[self.at:self.at + n]
        if len(raw) < n:
            raise BHTTPError(f"{what} is longer than the message")
        self.at += n
        return raw

    def fields(self, what: str) -> Fields:
        if self.done():  # truncated: the section and all after it are empty
            return ()
        section = _Reader(self.chunk(what))
        out = []
        while section.at < len(section.data):
            name = section.chunk(f"a field name of {what}")
            value = section.chunk(f"a field value of {what}")
            if not name or name != name.lower():
                raise BHTTPError(f"{what}: field names must be non-empty and lower-case; got {name!r:.40}")
            out.append((name, value))
        return tuple(out)

    def content(self) -> bytes:
        return b"" if self.done() else self.chunk("the content")

    def end(self) -> None:
        self.fields("the trailer section")
        if not self.done():
            raise BHTTPError("non-zero bytes after the message (padding must be zeros)")


def _text(raw: bytes, what: str) -> str:
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        raise BHTTPError(f"{what} must be ASCII") from None


def decode_request(data: bytes) -> BinaryRequest:
    """The known-length request ``data`` holds (:class:`BHTTPError` if it is malformed)."""
    reader = _Reader(data)
    framing = reader.varint("the framing indicator")
    if framing != 0:
        raise BHTTPError(f"framing indicator {framing}: expected 0 (a known-length request)")
    method, scheme, authority, path = (_text(reader.chunk(what), what)
                                       for what in ("the method", "the scheme", "the authority", "the path"))
    headers = reader.fields("the header section")
    content = reader.content()
    reader.end()
    return BinaryRequest(method, path, scheme, authority, headers, content)


def decode_response(data: bytes) -> BinaryResponse:
    """The known-length response ``data`` holds (:class:`BHTTPError` if it is malformed)."""
    reader = _Reader(data)
    framing = reader.varint("the framing indicator")
    if framing != 1:
        raise BHTTPError(f"framing indicator {framing}: expected 1 (a known-length response)")
    informational = []
    while True:
        status = reader.varint("the status code")
        if not 100 <= status <= 599:
            raise BHTTPError(f"status {status} is not in 100..599")
        if status >= 200:
            break
        informational.append((status, reader.fields("an informational response's fields")))
    headers = reader.fields("the header section")
    content = reader.content()
    reader.end()
    return BinaryResponse(status, headers, content, tuple(informational))
