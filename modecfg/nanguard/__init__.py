"""The NaN guard (``NanGuardMode``), its dumps and their replay: a feature laid out as
``ARCHITECTURE.md`` ("Where the code is going") says; it has no patch of its own (it is a mode:
PyTensor compiles it as any other; the graph as written it checks against is kept by the core's
compile hook).

- :mod:`modecfg.nanguard.mode`: the mode and its linker; every output and update checked for
  NaN, Inf and huge values, the bad node found and said at the user's line;
- :mod:`modecfg.nanguard.dump`: a dump's format and its writing (the call's arrays as data, the
  graph as a signed code part);
- :mod:`modecfg.nanguard.dump_reading`: reading one: the data part checked, the one unpickling
  (signed with the user's key, or ``--trust``);
- :mod:`modecfg.nanguard.replaying`: a dump run again, on the graph or the user's own function;
- :mod:`modecfg.nanguard.dumpgraph`: what a dump needs of PyTensor's graphs.

Signing (:mod:`modecfg.signing`) is the core's: compile caches sign their exports with it too.
"""
