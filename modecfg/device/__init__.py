"""The ``device`` flag and the JAX device path: a feature that owns its code and its contacts
with PyTensor (``ARCHITECTURE.md``, "Where the code is going").

- :mod:`modecfg.device.contacts`: its four patches (``JITLinker.make_all``; ``get_value``,
  ``set_value`` and the input check, on once a JAX function is linked), declared beside their
  replacements and registered in the one patch list when modecfg is wired;
- :mod:`modecfg.device.jaxlink`: PyTensor's JAX linker as the device flag runs it (data resident
  on the device, never stale; x64 and the matmul precision pinned per function; device timings),
  loaded at the first JAX link;
- :mod:`modecfg.device.where`: the flag itself (which linker a device means on this machine,
  the fallback rules, :func:`~modecfg.device.where.ran_on`);
- :mod:`modecfg.device.gpus`: which GPUs JAX sees, and selecting one.
"""
