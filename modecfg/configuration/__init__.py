"""Typed, layered configuration with provenance.

``config`` is the process-wide configuration, read from the environment and rc files
the first time it is used; ``load`` builds an independent one from explicit sources.

This layer stands on the errors and the registries alone: it never imports PyTensor
nor any part of modecfg above it. What the configuration tells PyTensor goes through
its public hooks (``Config.subscribe``, ``Config.guard``), which the PyTensor mirror
uses (see :mod:`modecfg._pytensor.mirror`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from modecfg._lazy import attach as _attach
from modecfg._record import Record
from modecfg.configuration import declarations as _declarations  # noqa: F401  (every flag declared, first)
from modecfg.configuration.flags import FlagSet, declared
from modecfg.configuration.live import Change, Config, Override, build
from modecfg.configuration.origin import Layer, Origin, Setting
from modecfg.configuration.resolve import Note, Resolution, gather, resolve
from modecfg.errors import ConfigError

if TYPE_CHECKING:  # the names handed out on first use, each written here once (modecfg._lazy)
    from modecfg.configuration.explain import Explanation as Explanation
    from modecfg.configuration.snapshot import Snapshot as Snapshot

__all__ = [
    "Change",
    "Config",
    "Diagnosis",
    "Explanation",
    "Layer",
    "Origin",
    "Override",
    "Snapshot",
    "change_flags",
    "config",
    "diagnose",
    "load",
]


def _resolution(
    env: Mapping[str, str],
    rc_files: Sequence[str | os.PathLike[str]] | None,
    assignments: Mapping[str, Any] | None,
    flags: FlagSet,
) -> Resolution:
    settings, errors, read = gather(env, None if rc_files is None else [os.fspath(p) for p in rc_files])
    res = Resolution(errors=errors, read=read)
    resolve(settings, res, flags)
    if assignments:
        origin = Origin(Layer.ASSIGNMENT, "modecfg.load(assignments=...)")
        resolve((Setting(name, value, origin) for name, value in assignments.items()), res, flags)
    return res


def load(
    env: Mapping[str, str] | None = None,
    rc_files: Sequence[str | os.PathLike[str]] | None = None,
    assignments: Mapping[str, Any] | None = None,
) -> Config:
    """A Config built from explicit sources, independent of the process-wide one.

    ``env`` stands for the environment (``None``: ``os.environ``); it supplies the flag
    variables, the rc path variables and HOME. ``rc_files`` replaces the rc files the
    environment would name. ``assignments`` is the assignment layer. Every problem in
    every source is found before raising: one :class:`~modecfg.errors.ConfigError`, or
    :class:`~modecfg.errors.ConfigErrors` holding them all.

    A setting naming a flag the installed PyTensor declares and modecfg does not is PyTensor's
    (``Config.for_pytensor``); a name neither declares is an error, before PyTensor's import
    and after it alike.
    """
    flags = declared()
    return build(_resolution(os.environ if env is None else env, rc_files, assignments, flags), flags=flags)


class Diagnosis(Record):
    """Every problem and obsolete flag in a set of sources, without raising."""

    errors: tuple[ConfigError, ...]
    notes: tuple[Note, ...]
    sources: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.errors


def diagnose(
    env: Mapping[str, str] | None = None,
    rc_files: Sequence[str | os.PathLike[str]] | None = None,
) -> Diagnosis:
    """Check the sources ``load`` would read and report every problem, raising nothing.
    (A setting of one of PyTensor's own flags is PyTensor's to check, at its import.)"""
    flags = declared()
    res = _resolution(os.environ if env is None else env, rc_files, None, flags)
    return Diagnosis(tuple(res.errors), tuple(res.notes), tuple(res.read))


def _process_sources(flags: FlagSet) -> Resolution:
    return _resolution(os.environ, None, None, flags)


config: Config = build(_process_sources, process_wide=True)


def change_flags(flags: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Override:
    """``config.override`` under its Theano / PyTensor name."""
    return config.override_for(kwargs if flags is None else {**flags, **kwargs}, sys._getframe(1))


# Loaded on first use: reading the configuration needs neither (each module costs start-up).
__getattr__ = _attach(__name__, __file__)  # the TYPE_CHECKING block's names, on first use
__dir__ = __getattr__.dir
