"""The registries of modes and linkers: names, descriptions, availability.

The bottom layer, with the errors: the ``mode`` and ``linker`` flags are checked
against these tables, so they import nothing of modecfg's configuration and never
PyTensor.
"""
