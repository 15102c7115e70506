"""Test values, as Theano had them (``compute_test_value``): a feature that owns its code and its
contacts with PyTensor, the first laid out so (``ARCHITECTURE.md``, "Where the code is going").

- :mod:`modecfg.testvalues.contacts`: its two patches (``Op.__call__`` and ``scan``), declared
  beside their replacements, registered in the one patch list when modecfg is wired, applied
  when the flag is first touched;
- :mod:`modecfg.testvalues.values`: what the replacements do, loaded at their first call with
  the flag on.
"""
