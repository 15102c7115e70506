"""CompareMode: a DebugMode for what actually runs, and everything it needs to say where a
difference comes from. A feature laid out as ``ARCHITECTURE.md`` ("Where the code is going") says;
it has no patch of its own (it is a mode: PyTensor compiles it as it compiles any other).

- :mod:`modecfg.compare.mode`: the mode and its linker; every call compared on the other backends;
- :mod:`modecfg.compare.judging`: values judged across backends (tolerances by dtype, the odd one);
- :mod:`modecfg.compare.search`: the first node that differs, inside loops too, and the rewrite
  that made it;
- :mod:`modecfg.compare.repro`: the reproduction script and its inputs;
- :mod:`modecfg.compare.graphs`: what it asks of PyTensor (a graph compiled on one linker, with
  some rewrites or none; a prefix of a graph);
- :mod:`modecfg.compare.graphsource`: a graph written as Python source that rebuilds it.
"""
