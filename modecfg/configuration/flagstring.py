"""Parse and format flag strings: ``"floatX=float32,traceback.limit=-1"``.

The rules are Theano's (``shlex`` with ``,`` as the only separator), made explicit:

* items are separated by commas outside quotes; empty items are skipped, so a
  leading comma from ``THEANO_FLAGS="$THEANO_FLAGS,..."`` is harmless;
* ``'...'`` quotes everything literally; ``"..."`` too, except ``\\"`` and ``\\\\``;
* quotes may stand anywhere in an item (``-L"C:/Program Files (x86)/lib"``);
* each item is split at its first ``=`` (quoted or not, as Theano did); blanks around names and
  values are dropped, blanks inside quotes are kept;
* a later item wins over an earlier one with the same name (at resolution).

Where Theano's ``shlex`` did something nobody means, we do not:

* a string wrapped whole in quotes, as Windows ``set VAR="a=b,c=d"`` leaves it, is
  unwrapped first;
* ``#`` is an ordinary character (shlex dropped the rest of the string);
* outside quotes a backslash escapes only ``,``, quotes, blanks and itself and is
  kept before anything else, so ``C:\\Users\\me`` survives;
* an item without ``=`` and an unterminated quote are errors, never dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from modecfg.configuration.origin import Layer, Origin, Setting
from modecfg.errors import FlagSyntaxError

__all__ = ["format_flags", "parse", "parse_flags", "unwrap_quotes"]

_QUOTES = "'\""
_BLANKS = " \t\r\n\f\v"
_ESCAPABLE = ",'\"\\" + _BLANKS

# One parsed character: (char, quoted). Quoted characters are never separators or blanks.
_Char = tuple[str, bool]


def _closing(text: str, start: int) -> int:
    """Index of the quote closing the one at ``start``, or -1."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        c = text[i]
        if quote == '"' and c == "\\" and i + 1 < len(text) and text[i + 1] in '"\\':
            i += 2
            continue
        if c == quote:
            return i
        i += 1
    return -1


def _unescape(body: str) -> str:
    """The text of a double-quoted body: ``\\"`` and ``\\\\`` are escapes, nothing else."""
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body) and body[i + 1] in '"\\':
            i += 1
        out.append(body[i])
        i += 1
    return "".join(out)


def unwrap_quotes(text: str) -> str:
    """``text`` without one pair of quotes wrapping it whole, if it has them."""
    t = text.strip()
    if len(t) >= 2 and t[0] in _QUOTES and _closing(t, 0) == len(t) - 1:
        inner = t[1:-1]
        return _unescape(inner) if t[0] == '"' else inner
    return text


def _items(text: str, source: str) -> list[list[_Char]]:
    items: list[list[_Char]] = [[]]
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == ",":
            items.append([])
        elif c in _QUOTES:
            end = _closing(text, i)
            if end < 0:
                raise FlagSyntaxError(
                    f"{source}: unterminated {c} quote at position {i + 1} in {text!r}; "
                    "close it or escape it with a backslash",
                    origin=Origin(Layer.ENV, source),
                )
            body = text[i + 1 : end]
            if c == '"':
                body = _unescape(body)
            items[-1].extend((ch, True) for ch in body)
            i = end
        elif c == "\\" and i + 1 < n and text[i + 1] in _ESCAPABLE:
            items[-1].append((text[i + 1], True))
            i += 1
        else:
            items[-1].append((c, False))
        i += 1
    return items


def _strip(chars: list[_Char]) -> str:
    lo, hi = 0, len(chars)
    while lo < hi and not chars[lo][1] and chars[lo][0] in _BLANKS:
        lo += 1
    while hi > lo and not chars[hi - 1][1] and chars[hi - 1][0] in _BLANKS:
        hi -= 1
    return "".join(c for c, _ in chars[lo:hi])


def parse(text: str, source: str = "<flags>", layer: Layer = Layer.ENV) -> list[Setting]:
    """The settings of a flag string in order (duplicates kept; the last one wins).

    ``source`` names where the string came from (``"THEANO_FLAGS"``) for messages and
    origins. Raises :class:`~modecfg.errors.FlagSyntaxError` for an item without ``=``
    or an unterminated quote.
    """
    origin = Origin(layer, source)
    settings: list[Setting] = []
    for chars in _items(unwrap_quotes(text), source):
        if all(not q and c in _BLANKS for c, q in chars):
            continue
        # The first '=', quoted or not: Theano split after removing quotes ("a=b" is a=b).
        eq = next((i for i, (c, _) in enumerate(chars) if c == "="), -1)
        if eq < 0:
            item = _strip(chars)
            raise FlagSyntaxError(
                f"{source}: item {item!r} has no '=' (each item is name=value, items are "
                f"separated by commas){_guess(item)}",
                origin=origin,
            )
        key = _strip(chars[:eq])
        if not key:
            raise FlagSyntaxError(f"{source}: item {_strip(chars)!r} has no name before '='", origin=origin)
        value = chars[eq + 1 :]
        settings.append(Setting(key, _strip(value), origin, quoted=any(q for _, q in value)))
    return settings


def _guess(item: str) -> str:
    """' (did you mean floatX=float32?)' when the bare word is a choice of one flag."""
    from modecfg.configuration.flags import FLAGS

    owners = [f.name for f in FLAGS.values() if f.choices_from is None and item in f.choices()]
    if len(owners) == 1:
        return f"; did you mean {owners[0]}={item}?"
    return ""


def parse_flags(text: str, source: str = "<flags>") -> dict[str, str]:
    """``parse`` as a dict, later duplicates winning; values are the raw text."""
    return {s.key: str(s.raw) for s in parse(text, source)}


def _needs_quotes(value: str) -> bool:
    """Anything beyond letters, digits and ``_./:+@%-`` is quoted: the string must read back the
    same here and through PyTensor's parser (shlex, where ``#`` starts a comment and blanks,
    newlines and quotes are special), a worker's MODECFG_FLAGS and PyTensor's hand-off alike."""
    import re  # here: reading the configuration imports no re (modecfg's start-up)

    return re.fullmatch(r"[\w./:+@%-]+", value) is None


def _format_value(value: object) -> str:
    text = value if isinstance(value, str) else str(value)
    if text and _needs_quotes(text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def format_flags(flags: Mapping[str, object] | Iterable[tuple[str, object]]) -> str:
    """A flag string that ``parse_flags`` reads back to the same names and values."""
    pairs = flags.items() if isinstance(flags, Mapping) else flags
    return ",".join(f"{k}={_format_value(v)}" for k, v in pairs)
