"""Making dumps as somebody else would: take one apart, change parts, sign it or not."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

from modecfg import signing
from modecfg.nanguard import dump as dump_module


def parts(path: str | Path) -> dict[str, bytes]:
    """Every part of a dump, as bytes."""
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def rebuild(
    source: str | Path,
    target: str | Path,
    *,
    replace: dict[str, bytes] | None = None,
    drop: tuple[str, ...] = (),
    sign: bool | bytes = True,
    signature: bytes | None = None,
) -> Path:
    """``source`` with parts replaced, added or dropped, a manifest that matches them, and
    signed with the user's key (``sign=True``), another key (bytes), not at all (False), or
    with the given ``signature`` part as it is."""
    content = {
        name: body
        for name, body in parts(source).items()
        if name not in (dump_module.MANIFEST, dump_module.SIGNATURE) and name not in drop
    }
    content.update(replace or {})
    digests = {n: {"sha256": hashlib.sha256(b).hexdigest(), "size": len(b)} for n, b in content.items()}
    manifest = json.dumps(
        {"format": dump_module.FORMAT, "version": dump_module.VERSION, "parts": digests}, sort_keys=True
    ).encode()
    if signature is None:
        if sign is True:
            key = signing.signing_key(create=True)
            assert isinstance(key, bytes), key
        else:
            key = sign or b""
        signed = (
            {"key": signing.key_id(key), "hmac-sha256": signing.sign(key, manifest)}
            if key
            else {"unsigned": "made by a test"}
        )
        signature = json.dumps(signed).encode()
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, body in content.items():
            zf.writestr(name, body)
        zf.writestr(dump_module.MANIFEST, manifest)
        zf.writestr(dump_module.SIGNATURE, signature)
    return Path(target)


class _Plan:
    """What the dump writer reads of a guarded call, for a graph made by hand."""

    def __init__(self, inputs: list[Any], outputs: list[Any], flags: dict[str, str]) -> None:
        from pytensor.graph.fg import FunctionGraph

        from modecfg._pytensor import marks

        self.original = FunctionGraph(inputs, outputs, clone=False)
        self.fgraph = self.original
        setattr(self.fgraph, marks.COMPILED_WITH, {k: (v, "a hand-made dump") for k, v in flags.items()})
        self.n_outputs, self.target_indices, self.linker = len(outputs), (), "py"


def craft(path: str | Path, inputs: list[Any], outputs: list[Any], values: list[Any],
          flags: dict[str, str] | None = None, *, sign: bool | bytes = False) -> Path:  # fmt: skip
    """A dump of ``outputs`` on ``values``, written by modecfg's own writer as anyone could
    (signed with the user's key only if ``sign``)."""
    plan = _Plan(inputs, outputs, flags or {})
    made = dump_module._parts(plan, values, None, ["output 0"], {})
    tmp = Path(str(path) + ".tmp")
    with open(tmp, "wb") as fh:
        dump_module._write_zip(fh, made)
    rebuild(tmp, path, sign=sign)
    tmp.unlink()
    return Path(path)
