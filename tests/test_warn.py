"""``modecfg._warn.folded``: a thread's warnings kept, every other thread's shown as usual."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modecfg._warn import folded
from tests.fresh import installed_module, pythonpath


def test_warnings_in_the_block_are_kept_not_shown_and_the_hook_is_put_back() -> None:
    before = getattr(warnings, "_showwarnmsg")  # noqa: B009
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with folded() as kept:
            warnings.warn("inside", UserWarning, stacklevel=1)
            assert getattr(warnings, "_showwarnmsg") is not before  # noqa: B009
        warnings.warn("after", UserWarning, stacklevel=1)
    assert [str(w.message) for w in kept] == ["inside"]
    assert [str(w.message) for w in shown] == ["after"]
    assert getattr(warnings, "_showwarnmsg") is before  # noqa: B009


def test_another_threads_warnings_are_shown_while_one_folds() -> None:
    inside, done = threading.Event(), threading.Event()

    def other() -> None:
        inside.wait(5)
        warnings.warn("theirs", UserWarning, stacklevel=1)
        done.set()

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        thread = threading.Thread(target=other)
        thread.start()
        with folded() as kept:
            warnings.warn("mine", UserWarning, stacklevel=1)
            inside.set()
            assert done.wait(5)
        thread.join()
    assert [str(w.message) for w in kept] == ["mine"]
    assert [str(w.message) for w in shown] == ["theirs"]


def test_nested_blocks_keep_their_own_and_the_outer_goes_on_keeping() -> None:
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with folded() as outer:
            warnings.warn("a", UserWarning, stacklevel=1)
            with folded() as inner:
                warnings.warn("b", UserWarning, stacklevel=1)
            warnings.warn("c", UserWarning, stacklevel=1)
        warnings.warn("d", UserWarning, stacklevel=1)
    assert [str(w.message) for w in outer] == ["a", "c"]
    assert [str(w.message) for w in inner] == ["b"]
    assert [str(w.message) for w in shown] == ["d"]


def test_the_filters_still_decide_and_an_error_leaves_the_hook_as_it_was() -> None:
    before = getattr(warnings, "_showwarnmsg")  # noqa: B009
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning, match="made an error"), folded() as kept:
            warnings.warn("ignored", DeprecationWarning, stacklevel=1)
            warnings.warn("made an error", RuntimeWarning, stacklevel=1)
    assert kept == []
    assert getattr(warnings, "_showwarnmsg") is before  # noqa: B009


def test_a_hook_set_while_folding_is_left_in_place_and_still_reaches_python() -> None:
    original = getattr(warnings, "_showwarnmsg")  # noqa: B009
    seen: list[str] = []
    try:
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            with folded():
                ours = getattr(warnings, "_showwarnmsg")  # noqa: B009

                def theirs(msg: warnings.WarningMessage) -> None:
                    seen.append(str(msg.message))
                    ours(msg)

                setattr(warnings, "_showwarnmsg", theirs)  # noqa: B010
            assert getattr(warnings, "_showwarnmsg") is theirs  # noqa: B009
            warnings.warn("later", UserWarning, stacklevel=1)
        assert seen == ["later"] and [str(w.message) for w in shown] == ["later"]
    finally:
        setattr(warnings, "_showwarnmsg", original)  # noqa: B010


@settings(max_examples=25, deadline=None)
@given(st.lists(st.booleans(), min_size=2, max_size=6))
def test_each_thread_keeps_exactly_its_own_and_shows_only_the_others(folds: list[bool]) -> None:
    """Threads that fold and threads that do not, warning at once (their order is the
    scheduler's): every warning is kept by its own folding thread or shown, never both, never lost."""
    start = threading.Barrier(len(folds))
    kept: dict[int, list[str]] = {}

    def work(index: int) -> None:
        start.wait(5)
        if folds[index]:
            with folded() as mine:
                for n in range(20):
                    warnings.warn(f"{index}:{n}", UserWarning, stacklevel=1)
            kept[index] = [str(w.message) for w in mine]
        else:
            for n in range(20):
                warnings.warn(f"{index}:{n}", UserWarning, stacklevel=1)

    before = getattr(warnings, "_showwarnmsg")  # noqa: B009
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(folds))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    for index, folding in enumerate(folds):
        own = [f"{index}:{n}" for n in range(20)]
        if folding:
            assert kept[index] == own
        else:
            assert [str(w.message) for w in shown if str(w.message).startswith(f"{index}:")] == own
    assert len(shown) == 20 * folds.count(False)
    assert getattr(warnings, "_showwarnmsg") is before  # noqa: B009


# -- where a warning is said -------------------------------------------------------------------------

LIBRARY = "def call(f, *args):\n    return f(*args)\n"


def test_a_warning_raised_under_an_installed_library_is_said_at_the_line_that_called_it(
    tmp_path: Path,
) -> None:
    from modecfg._warn import warn
    from modecfg.errors import ModecfgWarning

    library = installed_module(tmp_path, "somelib", LIBRARY)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        library.call(functools.partial(warn, "found", ModecfgWarning))  # no frame of the partial's
        library.call(library.call, functools.partial(warn, "deeper", ModecfgWarning))
    assert [(str(w.message), w.filename, w.lineno) for w in seen] == [
        ("found", __file__, line),
        ("deeper", __file__, line + 1),
    ]


def test_where_every_frame_outside_the_libraries_is_installed_the_innermost_is_named(tmp_path: Path) -> None:
    """An installed tool's own command (``python -m tool``: runpy, then the tool): no line of the
    user's is on the stack, and the warning is said at the tool's line nearest the call."""
    installed_module(tmp_path, "somelib", LIBRARY)
    site = tmp_path / "env" / "lib" / "site-packages"
    (site / "sometool.py").write_text(
        "import functools, warnings\n"
        "import somelib\n"
        "from modecfg._warn import warn\n"
        "from modecfg.errors import ModecfgWarning\n"
        "warnings.simplefilter('always')\n"
        "def main():\n"
        "    somelib.call(functools.partial(warn, 'found', ModecfgWarning))\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONPATH": pythonpath(site), "PYTHONWARNINGS": ""}
    run = subprocess.run(
        [sys.executable, "-m", "sometool"], capture_output=True, text=True, env=env, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert f"{site / 'somelib.py'}:2: ModecfgWarning: found" in run.stderr


def test_installed_means_a_site_packages_or_dist_packages_folder_or_the_environments_commands() -> None:
    import sysconfig

    from modecfg import demo
    from modecfg._source import installed

    assert installed(os.path.join(os.sep, "v", "lib", "python3", "site-packages", "pymc", "x.py"))
    assert installed(os.path.join(os.sep, "usr", "lib", "python3", "dist-packages", "pymc", "x.py"))
    assert installed(os.path.join(sysconfig.get_paths()["scripts"], "pytest"))
    assert not installed(os.path.join(os.sep, "home", "me", "site-packages-notes", "train.py"))
    assert not installed(os.path.join(os.sep, "home", "me", "train.py"))
    assert not installed(demo.__file__)  # the user's code, wherever modecfg is
