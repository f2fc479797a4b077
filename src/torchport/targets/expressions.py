"""A target's facts written as source expressions (the accelerator target's DEVICE_TYPE, the
distributed backend, a guard), evaluated once against a device type: by the run-time session
(runtime/session.py) and by the stand-ins a migrated file imports (compat/apex/_targets.py)."""

from __future__ import annotations

import importlib

from torchport.targets.base import definitions_used, modules_used

# The module name the target's definitions run under: code written for the target, as a migrated
# file has it, so its torch.cuda calls get torch's own answers under run (runtime/callers.py: the
# device_bf16_supported of a definition asks the real torch.cuda.is_bf16_supported on a GPU, not
# the patch that called it).
TARGET_CODE = "<torchport target>"


def evaluate(expression: str, device_type: str, definitions: dict[str, str] | None = None):
    """Evaluate one of the target's source expressions (dist_backend, guard, ...) here and now,
    with the target's `definitions` that it names (DEVICE_TYPE is `device_type`)."""
    namespace = {"DEVICE_TYPE": device_type, "__name__": TARGET_CODE}
    definitions = definitions or {}
    statements = [definitions[name] for name in definitions_used(definitions, expression) if name not in namespace]
    for source in [*statements, expression]:
        for module in modules_used(source):  # torch, contextlib, platform, ...
            root = module.split(".")[0]
            if root not in namespace and root not in definitions:
                importlib.import_module(module)  # (a submodule, such as os.path, as `import os.path` has it)
                namespace[root] = importlib.import_module(root)
    for statement in statements:
        exec(compile(statement, "<torchport target>", "exec"), namespace)
    return eval(compile(expression, "<torchport target>", "eval"), namespace)
