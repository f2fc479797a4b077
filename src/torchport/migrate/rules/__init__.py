"""The rewrite rules: one module per rule (or per family), each class declaring its code, its
place in the order, its README row and a sample that sets it off. They are found by walking
this package (base/registry.py), so a new rule is one new file, and run together in one pass
over a file (base/rules_pass.py)."""

from torchport.migrate.rules.base.registry import discover

RULES = discover(__name__, __path__)
