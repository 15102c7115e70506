"""modecfg for test suites: a pytest plugin, loaded by pytest wherever modecfg is installed.

* ``@pytest.mark.modecfg(floatX="float32", mode="FAST_COMPILE")`` (or a dict of dotted
  names) runs one test under those flags: a scoped override entered before the test's
  setup and left after its teardown, so the fixtures see the flags too and nothing
  outlives the test, whether it passes or fails. Marks on a class or module apply to each
  test in it, the closest mark winning per flag; ``pytest.param(..., marks=...)`` marks
  one parametrized case. A bad flag or value is an error of that test, naming the mark.
* ``--modecfg-flags "floatX=float32,optimizer=None"`` assigns flags for the whole run
  (origin ``pytest --modecfg-flags``); a bad one stops the run with a usage error.
* the fixture ``modecfg_config``: an isolated Config from explicit sources only (the
  defaults; no environment, no rc files), for tests of code that takes a Config.
* the report header names every flag not at its default and where it came from.

Invited only: this is a top-level module, not part of the ``modecfg`` package, because pytest
loads every installed plugin in every session, and importing anything of the package runs its
``__init__``, which makes PyTensor's configuration modecfg's. So a project that never names
modecfg runs its tests with PyTensor as it is: modecfg is imported only by a mark, the option,
the fixture, or a project that imports it itself (then the header names the flags set).
``-p no:modecfg`` turns the plugin off.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from modecfg.configuration import Config, Override

__all__ = ["modecfg_config"]

_OVERRIDE: pytest.StashKey[Override] = pytest.StashKey()
_SOURCE = "pytest --modecfg-flags"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("modecfg")
    group.addoption(
        "--modecfg-flags",
        default=None,
        metavar="FLAGS",
        help="modecfg flags for the whole run, as in THEANO_FLAGS: 'floatX=float32,optimizer=None'",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "modecfg(**flags): run this test (setup, call, teardown) with these modecfg flags, "
        "as a scoped override",
    )
    text = config.getoption("modecfg_flags", None)
    if not text:
        return
    import modecfg
    from modecfg.configuration.flagstring import parse

    try:
        for setting in parse(text, _SOURCE):
            modecfg.config.set(setting.key, setting.raw, source=_SOURCE)
    except modecfg.ConfigError as exc:
        raise pytest.UsageError(f"--modecfg-flags: {exc}") from None


def pytest_report_header(config: pytest.Config) -> list[str]:
    import sys

    if "modecfg" not in sys.modules:  # not invited (yet): nothing imported, nothing said
        return []
    try:
        import modecfg

        cfg = modecfg.config
        shown = [f"{name}={value!r} ({origin})" for name, (value, origin) in cfg.changed().items()]
    except Exception as exc:  # the header must not break the run; the first read will say it
        return [f"modecfg: the configuration cannot be read: {exc}"]
    return ["modecfg: " + ("; ".join(shown) if shown else "every flag at its default")]


def _mark_line(item: pytest.Item, node: Any, mark: Any) -> tuple[str, int | None]:
    """The file and line of one ``modecfg`` mark of the item: on the test function, in a
    ``pytest.param`` of its ``parametrize``, on its class, or the module's ``pytestmark``.
    Marks carry no line, so the source of the object holding it (``node``'s) is searched for
    the mark with its flags' values; the test's own line where that fails."""
    import inspect

    path, line, _ = item.location
    fallback = (str(item.path) if item.path else path, None if line is None else line + 1)
    holder = getattr(node, "obj", None)
    try:
        lines, start = inspect.getsourcelines(holder)  # type: ignore[arg-type]
        filename = inspect.getsourcefile(holder) or fallback[0]  # type: ignore[arg-type]
    except (OSError, TypeError):
        return fallback
    words = [str(value) for value in _flags_of(mark).values()]
    for wanted in (words, []):  # the mark with its values on its line, else the first mark
        for offset, text in enumerate(lines):
            if "mark.modecfg" in text and all(word in text for word in wanted):
                return filename, max(start, 1) + offset
    return fallback


def _flags_of(mark: Any) -> dict[str, Any]:
    flags: dict[str, Any] = {}
    for arg in mark.args:
        if not isinstance(arg, dict):
            raise TypeError(f"@pytest.mark.modecfg takes flags as keywords or a dict, not {arg!r}")
        flags.update(arg)
    flags.update(mark.kwargs)
    return flags


def _marked(item: pytest.Item) -> dict[str, tuple[Any, str, int | None]]:
    """Each flag of the item's ``modecfg`` marks (the closest mark wins per flag) with the file
    and line of the mark that set it."""
    found: dict[str, tuple[Any, str, int | None]] = {}
    for node, mark in reversed(list(item.iter_markers_with_node("modecfg"))):  # farthest first
        flags = _flags_of(mark)
        if flags:
            source, line = _mark_line(item, node, mark)
            found.update({name: (value, source, line) for name, value in flags.items()})
    return found


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before the fixtures are set up (a plain hook, inside every plugin's wrapper, so a bad
    mark is an error of this test that leaves the other plugins' state as they expect)."""
    marked = _marked(item)
    if marked:
        import modecfg
        from modecfg.configuration.origin import Layer, Origin

        override = modecfg.config.override_from(
            {
                name: (value, Origin(Layer.OVERRIDE, f"@pytest.mark.modecfg of {source}", line))
                for name, (value, source, line) in marked.items()
            }
        )
        override.__enter__()
        item.stash[_OVERRIDE] = override


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    try:
        return (yield)
    finally:
        override = item.stash.get(_OVERRIDE, None)
        if override is not None:
            del item.stash[_OVERRIDE]
            override.__exit__(None, None, None)


@pytest.fixture
def modecfg_config() -> Config:
    """An isolated Config: the defaults only, whatever the environment and rc files say."""
    import modecfg

    return modecfg.load(env={}, rc_files=[])
