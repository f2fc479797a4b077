"""What the rules are built on, one module a job.

rule.py       the protocol: `Rule` (and `TokenRule`, `TreeRule`, `ApiReferenceRule`), what a rule declares
context.py    `FileContext`: what the rules of one file share (target, findings, fixes, imports)
registry.py   how the rules are found: every rule module of the package, in each rule's `order`
rules_pass.py the one walk of a file that calls every rule
fixes.py      `ApplyFixes`: the recorded fixes applied bottom-up, and what they leave tidied
nodes.py      small CST helpers that read and build nodes (`call_argument`, `only_when`, ...)
folding.py, device_exprs.py, neighbours.py, and the families' bases (affinity.py,
training_step.py, torch_references.py: where a file names torch's APIs, read with `ast`): helpers
several rules share.

A rule never edits the tree: it records a finding and, for a change, a *fix* (a function from
the already updated node to its replacement); `ApplyFixes` runs them bottom-up, so fixes on
nested nodes compose.
"""
