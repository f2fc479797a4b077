"""Stand-ins for classes: calling one builds the target's object; isinstance still works.

`torch.device` cannot be subclassed, and `torch.cuda.Stream` must build a `torch.cpu.Stream`, so a
patched class is a small proxy class: its metaclass routes construction to a function and answers
`isinstance`/`issubclass` for the original class (and the replacement's class).

A proxy also compares equal to (and hashes like) its original: torch code that runs after the
patch reads `torch.device` at call time or at the import of a lazily imported module (Dynamo's
constant types, FX's code generator: `obj != torch.device`) and must still recognise the real
class there. Only an identity test (`is`) tells the two apart.
"""

from __future__ import annotations


def class_proxy(original: type, construct, also: tuple = (), as_call: bool = False) -> type:
    """A class named like `original` whose call is `construct(*args, **kwargs)` and for which
    `isinstance(x, proxy)` is true for instances of `original` or of any class in `also`.
    With `as_call`, `construct(cls, *args, **kwargs)` is the metaclass's __call__ itself (one
    Python frame less, for hot constructors such as torch.device)."""
    kinds = (original, *also)

    class ProxyMeta(type):
        def __call__(cls, *args, **kwargs):
            return construct(*args, **kwargs)

        def __instancecheck__(cls, obj):
            return isinstance(obj, kinds)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, kinds)

        def __eq__(cls, other):
            return other is cls or other is original

        def __ne__(cls, other):
            return not (other is cls or other is original)

        def __hash__(cls):
            return hash(original)

        def __repr__(cls):
            return f"<torchport proxy for {original.__module__}.{original.__qualname__}>"

    if as_call:
        ProxyMeta.__call__ = construct
    namespace = {
        "__module__": original.__module__,
        "__qualname__": original.__qualname__,
        "__doc__": original.__doc__,
        "__wrapped__": original,
    }
    return ProxyMeta(original.__name__, (), namespace)
