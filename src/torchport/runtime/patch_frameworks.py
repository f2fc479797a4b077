"""Frameworks' settings that name CUDA (apis/frameworks.py), under `run`, as `migrate` writes them
(TP034, TP035): transformers' `attn_implementation="flash_attention_2"` asks for flash-attn, a CUDA
build: the model gets torch's SDPA; diffusers' `enable_xformers_memory_efficient_attention()` does
nothing (SDPA, diffusers' default, stays). Lightning's `Trainer`/`Fabric(accelerator="gpu")` gets the
target's device type ("auto" on accelerator), and on the CPU float16 precision is bfloat16: read
where both hand their arguments to their connectors. transformers is patched when the script imports it,
at the method through which every requested attention passes first (PreTrainedModel's
`_check_and_adjust_attn_implementation`, since transformers 4.53); an older transformers has none,
and keeps its own answer (migrate rewrites the setting there)."""

from __future__ import annotations

import functools

from torchport.apis.frameworks import (ATTENTION_KEYWORD, CUDA_ONLY_ATTENTION, LIGHTNING_ACCELERATOR_KEYWORD,
                                       LIGHTNING_BFLOAT16, LIGHTNING_CONNECTORS, LIGHTNING_FLOAT16, LIGHTNING_GPU,
                                       LIGHTNING_PRECISION_KEYWORD, PORTABLE_ATTENTION, XFORMERS_SWITCH,
                                       XFORMERS_SWITCHES, lightning_accelerator)
from torchport.targets.devices import CUDA_DEVICE_TYPE
from torchport.runtime.after_import import after_import
from torchport.targets.verdict import Kind, Verdict

ORDER = 74  # after the stand-ins (it replaces nothing of torch: methods of the libraries, once imported)
MODELS_MODULE = "transformers.modeling_utils"
ATTENTION_CHOICE = "_check_and_adjust_attn_implementation"  # (self, attn_implementation, ...)


def install(session) -> None:
    if session.target.runs_cuda_code:
        return
    after_import(MODELS_MODULE, lambda models: _portable_attention(session, models.PreTrainedModel), session.book)
    for module, owner in XFORMERS_SWITCHES.items():
        after_import(module, lambda found, owner=owner: _no_xformers(session, getattr(found, owner)), session.book)
    for module, connector in LIGHTNING_CONNECTORS.items():
        after_import(module, lambda found, connector=connector: _lightning_settings(session, getattr(found, connector)),
                     session.book)


def _portable_attention(session, model_class) -> None:
    original = getattr(model_class, ATTENTION_CHOICE, None)
    if original is None:
        return
    verdict = Verdict(f"transformers {ATTENTION_KEYWORD}", Kind.ADAPTED, f'"{PORTABLE_ATTENTION}"',
                      f"flash-attn is built for CUDA alone: torch's SDPA runs on {session.target.name}")

    @functools.wraps(original)
    def choose(self, requested_attention, *args, **kwargs):
        if requested_attention in CUDA_ONLY_ATTENTION:
            session.log.note(verdict)
            requested_attention = PORTABLE_ATTENTION
        return original(self, requested_attention, *args, **kwargs)

    session.book.replace(model_class, ATTENTION_CHOICE, choose)


def _no_xformers(session, owner) -> None:
    original = getattr(owner, XFORMERS_SWITCH, None)
    if original is None:
        return
    verdict = Verdict(f"diffusers {XFORMERS_SWITCH}", Kind.NOOP, None,
                      "xformers is built for CUDA alone; diffusers' default attention, torch's SDPA, stays")

    @functools.wraps(original)
    def switch(self, *args, **kwargs):
        session.log.note(verdict)

    session.book.replace(owner, XFORMERS_SWITCH, switch)


def _lightning_settings(session, connector) -> None:
    ours = lightning_accelerator(session.target.device_type)
    accelerator = Verdict("lightning accelerator", Kind.ADAPTED, f'"{ours}"', "Lightning's CUDA accelerator, on the target")
    precision = Verdict("lightning precision", Kind.ADAPTED, "bfloat16", "the CPU mixes bfloat16, not CUDA's float16")
    original = connector.__init__

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        if str(kwargs.get(LIGHTNING_ACCELERATOR_KEYWORD)) in (*LIGHTNING_GPU, CUDA_DEVICE_TYPE):
            session.log.note(accelerator)
            kwargs[LIGHTNING_ACCELERATOR_KEYWORD] = ours
        asked = str(kwargs.get(LIGHTNING_PRECISION_KEYWORD))
        if not session.target.has_device and asked in LIGHTNING_FLOAT16:
            session.log.note(precision)
            kwargs[LIGHTNING_PRECISION_KEYWORD] = LIGHTNING_BFLOAT16[asked]
        original(self, *args, **kwargs)

    session.book.replace(connector, "__init__", __init__)
