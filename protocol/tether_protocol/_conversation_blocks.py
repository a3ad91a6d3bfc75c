"""The conversation's content blocks: the small custom type of docs/decisions/0001.

Owns: the block classes (keys the model does not name ride in ``extra``; an unknown type is an
``OtherBlock`` kept whole), their JSON (``blocks_from_json``, ``block_to_json``, ``_Blocks``),
``ConversationError`` and the one text rendering (``block_text``/``blocks_text``).
Must not: do I/O or know a provider's or a wire version's shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from ._json import JsonObject, type_name

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable


class ConversationError(ValueError):
    """A stored message (or block) that is not one the model can hold; names the field."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path} {reason}")
        self.path = path
        self.reason = reason


class _Block:
    """A frozen value with the fields its ``__slots__`` name (not a Struct: msgspec would
    write ``extra`` as a key of its own; ``block_to_json`` spreads it)."""

    __slots__: tuple[str, ...] = ()
    _DEFAULTS: ClassVar[tuple[Callable[[], Any], ...]] = ()  # one a field: how to make it if not given

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = self.__slots__
        values = dict(zip(names, args, strict=False))
        values.update(kwargs)
        for name, default in zip(names, self._DEFAULTS, strict=True):
            _set_field(self, name, values.pop(name) if name in values else default())
        if values:
            raise TypeError(f"{type(self).__name__} has no field {next(iter(values))!r}")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __hash__(self) -> int:
        return hash((type(self), *(repr(getattr(self, n)) for n in self.__slots__)))

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({fields})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen (use replace)")

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:  # copy, deepcopy and pickle
        return type(self), tuple(getattr(self, n) for n in self.__slots__)

    def __replace__(self, **changes: Any) -> Any:
        return type(self)(**{n: changes.pop(n, getattr(self, n)) for n in self.__slots__}, **changes)


_set_field = object.__setattr__


def _required() -> Any:
    raise TypeError("a required field is missing")


def _none() -> None:
    return None


class TextBlock(_Block):
    __slots__ = ("text", "extra")
    text: str
    extra: JsonObject

    def __init__(self, text: str, extra: JsonObject | None = None) -> None:  # the hot one: no loop
        _set_field(self, "text", text)
        _set_field(self, "extra", {} if extra is None else extra)


class ImageBlock(_Block):
    __slots__ = ("data", "mime_type", "uri", "extra")
    data: str | None  # base64
    mime_type: str | None
    uri: str | None
    extra: JsonObject
    _DEFAULTS = (_none, _none, _none, dict)


class AudioBlock(_Block):
    __slots__ = ("data", "mime_type", "extra")
    data: str | None  # base64
    mime_type: str | None
    extra: JsonObject
    _DEFAULTS = (_none, _none, dict)


class ResourceLink(_Block):
    __slots__ = ("uri", "name", "mime_type", "extra")
    uri: str
    name: str | None
    mime_type: str | None
    extra: JsonObject  # title, description, size, icons...
    _DEFAULTS = (_required, _none, _none, dict)


class ResourceContents(_Block):
    __slots__ = ("uri", "text", "blob", "mime_type", "extra")
    uri: str
    text: str | None  # a text resource; else `blob` (base64) or nothing
    blob: str | None
    mime_type: str | None
    extra: JsonObject
    _DEFAULTS = (_required, _none, _none, _none, dict)


class EmbeddedResource(_Block):
    __slots__ = ("resource", "extra")
    resource: ResourceContents
    extra: JsonObject
    _DEFAULTS = (_required, dict)


class OtherBlock(_Block):
    """A block of a type this model does not know, kept whole (its ``type`` included)."""

    __slots__ = ("type", "fields")
    type: str
    fields: JsonObject
    _DEFAULTS = (_required, _required)


ContentBlock: TypeAlias = TextBlock | ImageBlock | AudioBlock | ResourceLink | EmbeddedResource | OtherBlock


class _Blocks(tuple):  # type: ignore[type-arg]  # of ContentBlock; msgspec hands its lists to blocks_from_json
    """The type msgspec sees for a message's blocks (a custom type: ``blocks_from_json``)."""

    __slots__ = ()


# -- from and to the stored JSON ------------------------------------------------------


def _bad(path: str, expected: str, value: Any) -> ConversationError:
    return ConversationError(path, f"must be {expected}, not {type_name(value)}")


def _opt_str(data: JsonObject, key: str, path: str) -> str | None:
    value = data.get(key)
    if value is None or type(value) is str:
        return value
    raise _bad(f"{path}.{key}", "a string", value)


def _extra(data: JsonObject, known: frozenset[str]) -> JsonObject:
    """The keys the model does not name (``annotations``, ``_meta``...), kept as they are."""
    return {} if data.keys() <= known else {k: v for k, v in data.items() if k not in known}


_TEXT = frozenset({"type", "text"})
_IMAGE = frozenset({"type", "data", "mimeType", "uri"})
_LINK = frozenset({"type", "uri", "name", "mimeType"})
_RESOURCE = frozenset({"type", "resource"})
_CONTENTS = frozenset({"uri", "text", "blob", "mimeType"})


def block_from_json(data: Any, path: str = "") -> ContentBlock:
    """One stored content block; ``path`` prefixes an error's field path."""
    if type(data) is not dict:
        raise _bad(path, "an object", data)
    kind = data.get("type")
    if kind == "text":
        text = data.get("text", "")
        if type(text) is not str:
            raise _bad(f"{path}.text", "a string", text)
        return TextBlock(text, None if len(data) == 2 else _extra(data, _TEXT))
    if kind == "resource_link":
        uri = _opt_str(data, "uri", path) or ""
        return ResourceLink(uri, _opt_str(data, "name", path), _opt_str(data, "mimeType", path), _extra(data, _LINK))
    if kind == "resource":
        inner = data.get("resource", {})
        if type(inner) is not dict:
            raise _bad(f"{path}.resource", "an object", inner)
        where = f"{path}.resource"
        contents = ResourceContents(
            _opt_str(inner, "uri", where) or "",
            _opt_str(inner, "text", where),
            _opt_str(inner, "blob", where),
            _opt_str(inner, "mimeType", where),
            _extra(inner, _CONTENTS),
        )
        return EmbeddedResource(contents, _extra(data, _RESOURCE))
    if kind == "image":
        return ImageBlock(
            _opt_str(data, "data", path),
            _opt_str(data, "mimeType", path),
            _opt_str(data, "uri", path),
            _extra(data, _IMAGE),
        )
    if kind == "audio":
        return AudioBlock(_opt_str(data, "data", path), _opt_str(data, "mimeType", path), _extra(data, _IMAGE))
    if kind is not None and type(kind) is not str:
        raise _bad(f"{path}.type", "a string", kind)
    return OtherBlock(kind or "", dict(data))  # kept whole, its "type" (if any) included


def blocks_from_json(data: Any, path: str = ".content") -> tuple[ContentBlock, ...]:
    """A stored (or ACP) list of blocks (msgspec's hook for ``_Blocks``); an error's path
    starts with ``path``."""
    if type(data) is not list:
        raise _bad(path, "a list of content blocks", data)
    out: list[ContentBlock] = []
    for i, item in enumerate(data):
        # the usual block, a plain text one, without a call (and without formatting a path)
        if type(item) is dict and len(item) == 2 and type(text := item.get("text")) is str and item["type"] == "text":
            out.append(TextBlock(text))
        else:
            out.append(block_from_json(item, f"{path}[{i}]"))
    return _Blocks(out)


def _put(out: JsonObject, key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def block_to_json(block: ContentBlock) -> JsonObject:
    """The stored (and ACP) JSON of one block, its ``extra`` keys spread back in."""
    if type(block) is TextBlock:
        return (
            {"type": "text", "text": block.text, **block.extra} if block.extra else {"type": "text", "text": block.text}
        )
    if isinstance(block, OtherBlock):
        return dict(block.fields)
    if isinstance(block, EmbeddedResource):
        res = block.resource
        inner: JsonObject = {"uri": res.uri}
        _put(inner, "mimeType", res.mime_type)
        _put(inner, "text", res.text)
        _put(inner, "blob", res.blob)
        return {"type": "resource", "resource": {**inner, **res.extra}, **block.extra}
    out: JsonObject
    if isinstance(block, ResourceLink):
        out = {"type": "resource_link", "uri": block.uri}
        _put(out, "name", block.name)
    else:
        assert isinstance(block, (ImageBlock, AudioBlock)), block
        out = {"type": "image" if isinstance(block, ImageBlock) else "audio"}
        _put(out, "data", block.data)
    _put(out, "mimeType", block.mime_type)
    if isinstance(block, ImageBlock):
        _put(out, "uri", block.uri)
    out.update(block.extra)
    return out


# -- rendering blocks as text --------------------------------------------------------


def _fence(text: str) -> str:
    """A code fence longer than any backtick run in ``text`` (it cannot close it early)."""
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def block_text(block: ContentBlock) -> str:
    """One block as the text a model reads: links and attached files readable, what a
    text-only model cannot take (images, audio, unknown blocks) named, not dropped."""
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ResourceLink):
        return f"[file: {block.name or block.uri}]({block.uri})"
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        text = resource.text
        if text is None:
            return f"[file: {resource.uri}] (binary content omitted)"
        fence = _fence(text)
        return f"[file: {resource.uri}]\n{fence}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{fence}"
    if isinstance(block, ImageBlock):
        return "[image content omitted]"
    if isinstance(block, AudioBlock):
        return "[audio content omitted]"
    return f"[{block.type or 'unknown'} content omitted]"


def blocks_text(blocks: Iterable[ContentBlock]) -> str:
    """The blocks as one text, one block per line (``block_text``)."""
    return "\n".join(map(block_text, blocks))
