"""wire() and its inverse: after unwire(), nothing of modecfg is left on PyTensor."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def test_unwire_leaves_no_modecfg_object_on_any_pytensor_module_class_or_linker() -> None:
    code = textwrap.dedent(
        """
        import json, sys, warnings
        import numpy as np
        import modecfg, pytensor, pytensor.tensor as pt
        from modecfg import _wiring
        from pytensor.configparser import PyTensorConfigParser

        x = pt.vector("x")
        before = pytensor.function([x], x * 2)  # compiled with modecfg's integration
        _wiring.unwire()

        def ours(obj):
            cls = obj if isinstance(obj, type) else type(obj)
            names = [getattr(obj, "__module__", None) or "", cls.__module__ or ""]
            return any(n.startswith("modecfg") for n in names if isinstance(n, str))

        left = []
        for name, module in list(sys.modules.items()):
            if not name.startswith("pytensor") or module is None:
                continue
            for attr, value in list(vars(module).items()):
                if ours(value):
                    left.append(f"{name}.{attr}")
                if isinstance(value, type) and value.__module__.startswith("pytensor"):
                    for cattr, cvalue in list(vars(value).items()):
                        if ours(cvalue):
                            left.append(f"{name}.{attr}.{cattr}")
        after = pytensor.function([x], x * 2)  # compiled by PyTensor alone
        left += [f"linker {type(l).__name__}" for l in (after.maker.linker,) if ours(l)]
        left += [repr(h) for h in sys.meta_path if ours(h)]
        out = {
            "left": sorted(set(left)),
            "config": type(pytensor.config) is PyTensorConfigParser,
            "params": [n for n, p in pytensor.config._config_var_dict.items() if ours(p)],
            "runs": after(np.array([1.0, 2.0])).tolist() == before(np.array([1.0, 2.0])).tolist(),
        }
        _wiring.wire()  # and back
        from modecfg._pytensor import install
        install()
        out["back"] = type(pytensor.config._config_var_dict["floatX"]).__name__ == "FlagParam"
        print(json.dumps(out))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"left": [], "config": True, "params": [], "runs": True, "back": True}
