"""Tricky torch calls that a capture must not change: each case runs plainly and under `ops capture`,
`shapes` and the detector, and must return the same thing (values, dtype, shape, strides,
requires_grad, grad_fn) or raise the same error. A new case is one line in CASES.

Each case builds its own inputs (no shared state, no unseeded randomness), so it can run in any
order and in any process. `outcomes()` runs them all and keeps what each returned or raised;
`differences(plain, captured)` compares two such runs.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


def f():  # float32, (2, 3), a zero and negatives among its values
    return torch.tensor([[-1.5, 0.0, 0.25], [0.7, 2.0, -3.3]])


def i():  # int64, (2, 3), a zero among its values
    return torch.tensor([[0, 1, 2], [3, -4, 5]])


def b():  # bool, (2, 3)
    return torch.tensor([[True, False, True], [False, False, True]])


def h():  # float16, (3,)
    return torch.tensor([0.1, 1.5, -2.25], dtype=torch.float16)


def c():  # complex64, (2,)
    return torch.tensor([1 + 2j, -0.5j])


def z():  # a 0-dim float32
    return torch.tensor(1.75)


def p():  # a leaf that requires grad
    return torch.tensor([0.3, -1.2, 2.5], requires_grad=True)


def grads(loss_of, *leaves):
    """Backward through `loss_of(*leaves)`: the leaves' gradients."""
    loss_of(*leaves).backward()
    return tuple(leaf.grad for leaf in leaves)


def then(value, *steps):
    """Run the in-place `steps` (functions of value), then return value: `x %= 0.4` as an expression."""
    for step in steps:
        step(value)
    return value


def setitem(target, index, value):
    target[index] = value
    return target


def iadd(target, index, value):
    target[index] += value
    return target


def seeded(make, seed=0):
    torch.manual_seed(seed)
    return make()


def with_default_dtype(dtype, make):
    saved = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        return make()
    finally:
        torch.set_default_dtype(saved)


def module(make, *inputs, seed=0):
    """A module built under a seed, called on `inputs`: (its output, its parameters' grads,
    its buffers), so that running statistics count too."""
    torch.manual_seed(seed)
    layer = make()
    out = layer(*inputs)
    first = out[0] if isinstance(out, tuple) else out
    first.float().sum().backward()
    return out, [q.grad for q in layer.parameters()], list(layer.buffers())


class Tagged(torch.Tensor):
    """A __torch_function__ subclass that keeps its type through every op (as torch's default)."""


class Doubling(torch.Tensor):
    """A __torch_function__ subclass that changes what `%` does: its results are doubled."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        result = super().__torch_function__(func, types, args, kwargs or {})
        if func is torch.Tensor.__mod__:
            return result * 2
        return result


class Wrapper(torch.Tensor):
    """A __torch_dispatch__ wrapper subclass: it holds a plain tensor and runs each aten op on it."""

    @staticmethod
    def __new__(cls, elem):
        return torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)

    def __init__(self, elem):
        self.elem = elem

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(value):
            return value.elem if isinstance(value, Wrapper) else value

        args = torch.utils._pytree.tree_map(unwrap, args)
        kwargs = torch.utils._pytree.tree_map(unwrap, kwargs or {})
        out = func(*args, **kwargs)
        return torch.utils._pytree.tree_map(lambda v: Wrapper(v) if isinstance(v, torch.Tensor) else v, out)


class RemainderAsFmod(torch.overrides.TorchFunctionMode):
    """A mode of the script's own: `%` becomes fmod."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.__mod__:
            func = torch.fmod
        return func(*args, **(kwargs or {}))


def under(context, make):
    with context:
        return make()


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3 % 7.5

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


class Counting(torch.utils._python_dispatch.TorchDispatchMode):
    """A dispatch mode of the script's own, as FlopCounterMode or a debugging mode is: it counts
    the aten ops it sees."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def counted(make):
    with Counting() as mode:
        out = make()
    return out, mode.seen


def saved_and_loaded(value):
    buffer = io.BytesIO()
    torch.save(value, buffer)
    buffer.seek(0)
    return torch.load(buffer)


SCALAR_OPERATORS = {
    # Python scalars on either side of an operator
    "tensor % float (the YOLO trainer's line)": lambda: (f() * 3.7) % 1.,
    "float % tensor (__rmod__)": lambda: 5.5 % f(),
    "int tensor % float": lambda: i() % 2.5,
    "int % int tensor": lambda: 7 % (i().abs() + 1),
    "int tensor % 0 raises": lambda: i() % 0,
    "half % float keeps half": lambda: h() % 0.1,
    "0-dim % float": lambda: z() % 0.3,
    "tensor ** float": lambda: f().abs() ** 0.5,
    "float ** tensor (__rpow__)": lambda: 2. ** f(),
    "int ** int tensor": lambda: 2 ** i().abs(),
    "int tensor ** float": lambda: i() ** 1.5,
    "int tensor ** negative int raises": lambda: i() ** -1,
    "float ** int tensor": lambda: 2.5 ** i(),
    "tensor // float": lambda: f() // 0.4,
    "float // tensor (__rfloordiv__)": lambda: 3. // f(),
    "int tensor // int": lambda: i() // 2,
    "int // int tensor by zero raises": lambda: 7 // i(),
    "float - tensor (__rsub__)": lambda: 1.5 - f(),
    "int - int tensor": lambda: 3 - i(),
    "int - bool tensor raises": lambda: 1 - b(),
    "float / int tensor (__rtruediv__)": lambda: 1. / i(),
    "int tensor / int": lambda: i() / 2,
    "tensor / 0.": lambda: f() / 0.,
    "complex * float tensor": lambda: 1j * f(),
    "half + complex": lambda: h()[:2].float() + 1j,
    "tensor > float": lambda: f() > 0.5,
    "float < tensor": lambda: 0.5 < f(),
    "int tensor == int": lambda: i() == 2,
    "float >= int tensor": lambda: 2.5 >= i(),
    "tensor != tensor": lambda: f() != f().t().t(),
    "bool & bool": lambda: b() & True,
    "int | int": lambda: i() | 4,
    "int ^ int tensor (__rxor__)": lambda: 5 ^ i(),
    "int tensor << 1": lambda: i().abs() << 1,
    "int << int tensor (__rlshift__)": lambda: 1 << i().abs(),
    "int tensor >> 1": lambda: i() >> 1,
    "~bool": lambda: ~b(),
    "-tensor, abs(tensor)": lambda: (-f(), abs(f())),
    "int8 overflow wraps": lambda: torch.tensor([127], dtype=torch.int8) + 1,
    "divmod raises": lambda: divmod(f(), 2),
    "div rounding modes": lambda: (torch.div(i(), 2, rounding_mode="floor"), torch.div(i(), 2, rounding_mode="trunc")),
    "clamp int by float": lambda: torch.clamp(i(), min=0.5),
    "fmod, remainder, copysign by float": lambda: (torch.fmod(f(), 0.4), torch.remainder(f(), -0.4), torch.copysign(f(), -1.)),
    "float_power, xlogy, xlog1py with numbers": lambda: (torch.float_power(i(), 2), torch.xlogy(2., f().abs()),
                                                         torch.special.xlog1py(f().abs(), 2.)),
    "lerp, addcmul, addcdiv with numbers": lambda: (torch.lerp(f(), f() * 2, 0.5), torch.addcmul(f(), f(), f(), value=0.5),
                                                    torch.addcdiv(f(), f(), f().abs() + 1, value=-2)),
    "isin with a number, bucketize": lambda: (torch.isin(i(), 2), torch.bucketize(f(), torch.tensor([0., 1.]))),
    "nan_to_num, heaviside": lambda: (torch.nan_to_num(f() / 0., nan=0., posinf=9.), torch.heaviside(f(), torch.tensor(0.5))),
    "default float64: int tensor % float": lambda: with_default_dtype(torch.float64, lambda: (i() % 2.5, torch.tensor([1.5]))),
    "result_type, can_cast": lambda: (torch.result_type(i(), 2.5), torch.can_cast(torch.float32, torch.int32)),
}

IN_PLACE_VIEWS_AND_INDEXING = {
    # in-place ops
    "x %= float": lambda: then(f(), lambda x: x.__imod__(0.4)),
    "add_, mul_, pow_, clamp_": lambda: then(f(), lambda x: x.add_(1.5), lambda x: x.mul_(0.9), lambda x: x.pow_(2),
                                             lambda x: x.clamp_(0.1, 0.5)),
    "masked_fill_, fill_, zero_ of a row": lambda: then(f(), lambda x: x.masked_fill_(x > 0.3, 0.), lambda x: x[0].fill_(2),
                                                       lambda x: x[1, :1].zero_()),
    "copy_ from ints": lambda: f().copy_(i()),
    "int div_ raises": lambda: i().div_(2),
    "int remainder_ by an int": lambda: i().remainder_(3),
    "in-place on a leaf that requires grad raises": lambda: p().add_(1),
    # views
    "a row's in-place change reaches its base": lambda: then(f(), lambda x: x[0].mul_(2)),
    "x[:, ::2] += 1": lambda: iadd(f(), (slice(None), slice(None, None, 2)), 1),
    "transposed % float keeps the layout": lambda: f().t() % 0.3,
    "view, reshape, expand, unsqueeze, narrow, diagonal": lambda: (f().view(-1), f().reshape(3, 2), z().expand(2, 2),
                                                                   f().unsqueeze(0), f().narrow(1, 1, 2), f().diagonal()),
    "split and chunk give views": lambda: (f().split(1), f().chunk(3, dim=1)),
    "as_strided, unfold": lambda: (f().as_strided((2, 2), (1, 2)), torch.arange(6.).unfold(0, 2, 1)),
    "contiguity and strides": lambda: (f().t().is_contiguous(), f().t().contiguous().stride()),
    "channels_last * float": lambda: torch.ones(1, 2, 3, 3).to(memory_format=torch.channels_last) * 0.5,
    "conj view, neg view": lambda: (c().conj() * 2, c().conj().imag, torch.view_as_real(c())),
    # out=
    "add out=": lambda: torch.add(f(), 1., out=torch.empty(2, 3)),
    "remainder out=": lambda: torch.remainder(f(), 0.3, out=torch.empty(2, 3)),
    "mul out= an empty tensor, resized": lambda: torch.mul(f(), 2, out=torch.empty(0)),
    "add out= of a lower dtype raises": lambda: torch.add(i(), 1.5, out=torch.empty(2, 3, dtype=torch.long)),
    "sum out=": lambda: torch.sum(f(), 0, out=torch.empty(3)),
    # integer and boolean tensors
    "int and bool reductions": lambda: (i().sum(), b().sum(), b().float().mean(), torch.prod(b()), torch.cumsum(i(), 0)),
    "mean of ints raises": lambda: i().mean(),
    "bool + bool, bool * int": lambda: (b() + b(), b() * 3),
    "uint8 - 300": lambda: torch.tensor([1, 200], dtype=torch.uint8) - 300,
    "cat of int and float promotes": lambda: torch.cat([i(), f()]),
    "bool of a tensor with several values raises": lambda: bool(f()),
    # __torch_function__ subclasses, modes of the script's own
    "a subclass keeps its type": lambda: f().as_subclass(Tagged) % 0.3,
    "a subclass through torch functions": lambda: (torch.add(f().as_subclass(Tagged), 1.), torch.where(b(), f().as_subclass(Tagged), 0.)),
    "a subclass that changes %": lambda: f().as_subclass(Doubling) % 0.3,
    "a function mode of the script's own": lambda: under(RemainderAsFmod(), lambda: f() % 0.4),
    "a dispatch mode of the script's own": lambda: counted(lambda: (f() @ f().t() % 1., 2 ** i(), torch.where(b(), 1., 0.))),
    "torch.device as a context": lambda: under(torch.device(f().device), lambda: torch.zeros(2) + 1),
    # complex
    "complex abs, angle, mul": lambda: (c().abs(), c().angle(), c() * c(), c().real),
    "complex division by a float": lambda: c() / 2.5,
    # indexing and setitem with tensors
    "index by an int tensor, a mask, a 0-dim tensor": lambda: (f()[torch.tensor([1, 0])], f()[b()], f()[torch.tensor(1)]),
    "index with None and Ellipsis": lambda: f()[..., None],
    "x[mask] = float": lambda: setitem(f(), b(), 0.5),
    "x[int tensor] = tensor": lambda: setitem(f(), torch.tensor([1]), torch.tensor([7., 8., 9.])),
    "x[0, int tensor] += 1": lambda: iadd(f(), (0, torch.tensor([0, 2])), 1),
    "ints[mask] = float truncates": lambda: setitem(i(), b(), 2.7),
    "index_put_ accumulate": lambda: f().index_put_((torch.tensor([0, 0]),), torch.tensor(9.), accumulate=True),
    "gather, scatter_ with a number, scatter_add_": lambda: (f().gather(1, torch.tensor([[0], [2]])),
                                                             f().scatter_(1, torch.tensor([[0], [2]]), 1.5),
                                                             f().scatter_add_(0, torch.tensor([[1, 0, 1]]), torch.ones(1, 3))),
    "index_select, index_add_ alpha=2, masked_select": lambda: (f().index_select(1, torch.tensor([2, 0])),
                                                                f().index_add_(0, torch.tensor([1]), torch.ones(1, 3), alpha=2),
                                                                f().masked_select(b())),
    "index out of range raises": lambda: f()[torch.tensor([5])],
    # torch.where with scalars
    "where(cond, tensor, float)": lambda: torch.where(f() > 0.3, f(), 0.),
    "where(cond, float, float)": lambda: torch.where(f() > 0.3, 1., 0.),
    "where(cond, int tensor, float)": lambda: torch.where(i() > 1, i(), 2.5),
    "where(cond, int, int)": lambda: torch.where(b(), 1, 0),
    "where(cond) is nonzero": lambda: torch.where(b()),
    # factory functions with device= and dtype=
    "zeros, full, arange, linspace with dtype=": lambda: (torch.zeros(2, dtype=torch.complex64), torch.full((2,), 7, dtype=torch.int8),
                                                          torch.arange(0, 1, 0.25), torch.linspace(0, 1, 5, dtype=torch.float64)),
    "factories with device=": lambda: (torch.zeros(2, device=f().device), torch.ones(2, device=torch.device(f().device.type)),
                                       torch.eye(2, dtype=torch.bool, device=f().device)),
    "*_like and new_* with dtype=": lambda: (torch.ones_like(i(), dtype=torch.float64), f().new_zeros(3), f().new_tensor([1, 2]),
                                             torch.full_like(f(), 2.5, dtype=torch.int32)),
    "tensor, as_tensor, scalar_tensor": lambda: (torch.tensor([1, 2.5]), torch.as_tensor([1, 2]), torch.scalar_tensor(3),
                                                 torch.tensor(True) + 1, torch.tensor(3) / 2),
    "seeded randomness": lambda: seeded(lambda: (torch.randn(3), torch.randint(0, 9, (3,)), torch.randperm(4),
                                                 torch.rand(2).bernoulli(), F.dropout(torch.ones(4), 0.5))),
    "a generator of its own": lambda: torch.randn(3, generator=torch.Generator().manual_seed(1)),
}

AUTOGRAD = {
    # autograd: backward through captured ops gives the same grads
    "grads of % float": lambda: grads(lambda x: ((x * 3.7) % 1.).sum(), p()),
    "grads of ** float and float **": lambda: grads(lambda x: (x.abs() ** 2.5 + 2 ** x).sum(), p()),
    "grads of where with a float, clamp": lambda: grads(lambda x: (torch.where(x > 0, x, 0.) + x.clamp(0.2)).sum(), p()),
    "autograd.grad with create_graph": lambda: (lambda x: torch.autograd.grad((x ** 3 % 2.).sum(), x, create_graph=True))(p()),
    "second derivative": lambda: (lambda x: torch.autograd.grad(torch.autograd.grad((x ** 3).sum(), x, create_graph=True)[0].sum(), x))(p()),
    "results require grad, with their grad_fn": lambda: (lambda x: (x * 2, x % 0.5, x.detach(), x.sum().item()))(p()),
    "a hook on a leaf": lambda: grads(lambda x: (x.register_hook(lambda g: g * 2), (x * 1.5).sum())[1], p()),
    "retain_grad on an intermediate": lambda: (lambda x: (lambda y: (y.retain_grad(), y.sum().backward(), y.grad, x.grad))(x * 2 % 1.))(p()),
    "a custom autograd.Function": lambda: grads(lambda x: Cube.apply(x).sum(), p()),
    "checkpoint": lambda: grads(lambda x: torch.utils.checkpoint.checkpoint(lambda t: (t * 3.7 % 1.).sum(), x, use_reentrant=False), p()),
    "backward twice raises": lambda: (lambda y: (y.backward(), y.backward()))((p() ** 2).sum()),
    "torch.func.grad and vmap": lambda: (torch.func.grad(lambda x: (x ** 2.5 % 3.).sum())(p().detach().abs()),
                                         torch.func.vmap(lambda row: row % 0.3)(f())),
}

MODULES_AND_MODES = {
    # nn.Module calls
    "Linear": lambda: module(lambda: nn.Linear(3, 2), f()),
    "Conv2d with padding": lambda: module(lambda: nn.Conv2d(1, 2, 3, padding=1), torch.arange(16.).reshape(1, 1, 4, 4) % 3.),
    "BatchNorm1d in training updates its statistics": lambda: module(lambda: nn.BatchNorm1d(3), f()),
    "LayerNorm, Embedding": lambda: (module(lambda: nn.LayerNorm(3), f()), module(lambda: nn.Embedding(6, 2), i().abs())),
    "GRU": lambda: module(lambda: nn.GRU(3, 2, batch_first=True), f().unsqueeze(0)),
    "Dropout in training, seeded": lambda: module(lambda: nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5)), f()),
    "cross_entropy, interpolate, pad with a value": lambda: (F.cross_entropy(f(), torch.tensor([2, 0])),
                                                             F.interpolate(f()[None], scale_factor=2.),
                                                             F.pad(f(), (1, 1), value=0.5)),
    "autocast to bfloat16": lambda: under(torch.autocast(f().device.type, dtype=torch.bfloat16), lambda: f() @ f().t()),
    # torch.no_grad, inference_mode
    "no_grad results need no grad": lambda: under(torch.no_grad(), lambda: (p() * 2, p() % 0.5)),
    "enable_grad inside no_grad": lambda: under(torch.no_grad(), lambda: under(torch.enable_grad(), lambda: p() * 2)),
    "inference_mode": lambda: under(torch.inference_mode(), lambda: (lambda y: (y, y.is_inference()))(f() % 0.3)),
    # 0-dim tensors, Python conversions
    "0-dim with a dimensioned int tensor": lambda: z() + i(),
    "0-dim item, float, int, format": lambda: (z().item(), float(z() * 2), int(z()), f"{z():.3f}", z() > 1.),
    "round of a tensor raises": lambda: round(z()),
    "0-dim ** float, 0-dim int / int": lambda: (z() ** 2., torch.tensor(7) / 2, torch.tensor(7) // 2),
    "len, tolist, iteration, in": lambda: (len(f()), f().tolist(), [row for row in f()], 2 in i()),
    "repr of a tensor": lambda: (repr(f()), repr(h()), repr(c()), str(i())),
    "sort, topk, max with dim, unique": lambda: (torch.sort(f(), dim=1), f().topk(2), torch.max(f(), dim=0), f().max(),
                                                 torch.unique(i() % 2, return_counts=True)),
    "einsum, matmul, @ of vectors": lambda: (torch.einsum("ij,kj->ik", f(), f()), torch.matmul(f()[0], f()[1]), f()[0] @ f()[1]),
    "sparse * float": lambda: (f().to_sparse() * 2.5).to_dense(),
    "meta tensors % float, ** float": lambda: (torch.empty(2, 3, device="meta") % 1., 2. ** torch.empty(3, device="meta")),
    "quantized round trip": lambda: torch.quantize_per_tensor(f(), 0.1, 0, torch.qint8).dequantize() % 0.3,
    "type conversions": lambda: (f().int(), f().to(torch.float16), f().double(), f().type(torch.int32), f().type(), f().to(i())),
    "torch.save and torch.load": lambda: saved_and_loaded(f() % 0.3),
    "numpy()": lambda: (f() % 0.3).numpy(),
}

CASES = {**SCALAR_OPERATORS, **IN_PLACE_VIEWS_AND_INDEXING, **AUTOGRAD, **MODULES_AND_MODES}
# What a script run by a command runs: the in-process tests run all of CASES under the same
# recorder and detector, so the commands' own part (launching the script) needs no more.
IN_A_SCRIPT = {**SCALAR_OPERATORS, **AUTOGRAD}

# Cases that cost a second or more the first time a process runs them (a __torch_dispatch__
# subclass makes torch import torch.distributed.tensor): run by `make fidelity`.
COSTLY_CASES = {
    "a __torch_dispatch__ wrapper subclass": lambda: ((Wrapper(f()) % 0.3).elem, (Wrapper(f()) * 2.5).sum().elem,
                                                      (2 ** Wrapper(i().abs())).elem),
}


# --- running and comparing ----------------------------------------------------------------------


@dataclass(frozen=True)
class Raised:
    kind: str
    message: str


@dataclass
class Facts:
    """What is compared of a tensor: all but its values here, the values apart (NaN equal to NaN)."""

    meta: tuple
    values: torch.Tensor | None


def outcomes(cases: dict = CASES) -> dict[str, object]:
    """Each case's result, or a Raised: what it returned is kept as it is, to be read by `facts`
    after the capture is over."""
    seen = {}
    for name, make in cases.items():
        try:
            seen[name] = make()
        except Exception as error:  # the case's own failure is its outcome
            text = str(error).strip()
            seen[name] = Raised(type(error).__name__, text.splitlines()[0] if text else "")
    return seen


def facts(value):
    """A result made comparable: tensors as Facts, containers element by element."""
    if isinstance(value, torch.Tensor):
        return _tensor_facts(value)
    if isinstance(value, torch.Size):
        return ("Size", tuple(value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [facts(item) for item in value])
    if isinstance(value, float) and value != value:
        return ("float", "nan")
    if type(value).__name__ == "ndarray":
        return ("ndarray", str(value.dtype), value.shape, value.tolist())
    return value


def _tensor_facts(tensor: torch.Tensor) -> Facts:
    with torch._C.DisableTorchFunction():
        grad_fn = type(tensor.grad_fn).__name__ if tensor.grad_fn is not None else None
        strided = tensor.layout == torch.strided
        meta = (type(tensor).__name__, tensor.dtype, tuple(tensor.shape), tensor.stride() if strided else None,
                tensor.requires_grad, grad_fn, tensor.layout, tensor.device, tensor.is_inference(), tensor.is_conj())
        if isinstance(tensor, Wrapper) or tensor.is_meta:  # no values to compare
            return Facts(meta, None)
        plain = torch.Tensor._make_subclass(torch.Tensor, tensor.detach()) if type(tensor) is not torch.Tensor else tensor
        values = plain.detach().resolve_conj().resolve_neg()
        return Facts(meta, values.to_dense() if not strided else values.clone())


def differences(plain: dict, captured: dict) -> list[str]:
    """'case: what differs', one line per case whose outcomes differ."""
    found = []
    for name in plain:
        problem = _difference(facts(plain[name]), facts(captured[name]))
        if problem:
            found.append(f"{name}: {problem}")
    return found


def _difference(expected, seen, where: str = "") -> str | None:
    if isinstance(expected, Facts) or isinstance(seen, Facts):
        if not (isinstance(expected, Facts) and isinstance(seen, Facts)):
            return f"{where or 'result'}: {expected!r} != {seen!r}"
        if expected.meta != seen.meta:
            return f"{where or 'tensor'}: {expected.meta} != {seen.meta}"
        if expected.values is not None and not _same_values(expected.values, seen.values):
            return f"{where or 'tensor'}: values {expected.values} != {seen.values}"
        return None
    if isinstance(expected, tuple) and len(expected) == 2 and isinstance(expected[1], list):
        if not (isinstance(seen, tuple) and len(seen) == 2 and seen[0] == expected[0] and len(seen[1]) == len(expected[1])):
            return f"{where or 'result'}: {expected!r} != {seen!r}"
        for index, (a, b) in enumerate(zip(expected[1], seen[1])):
            problem = _difference(a, b, f"{where}[{index}]")
            if problem:
                return problem
        return None
    return None if expected == seen else f"{where or 'result'}: {expected!r} != {seen!r}"


def _same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.is_floating_point() or a.is_complex():
        a, b = torch.view_as_real(a) if a.is_complex() else a, torch.view_as_real(b) if b.is_complex() else b
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return torch.equal(a, b)
