"""The NPU forms the conversion reads back into CUDA's dialect, each as (NPU source, CUDA source),
for a target other than CUDA: the specification of npu_to_cuda read in one place."""

from __future__ import annotations

from textwrap import dedent

import pytest


def case(before: str, after: str, id: str):
    return pytest.param(dedent(before).lstrip("\n"), dedent(after).lstrip("\n"), id=id)


CASES = [
    case("""
        import torch
        import torch_npu

        torch.npu.set_device(0)
        x = torch.ones(2).npu()
        """, """
        import torch

        torch.cuda.set_device(0)
        x = torch.ones(2).cuda()
        """, id="import torch_npu goes once nothing needs it; torch.npu -> torch.cuda; .npu() -> .cuda()"),
    case("""
        import torch
        try:
            import torch_npu
        except ImportError:
            pass
        torch.npu.synchronize()
        """, """
        import torch
        torch.cuda.synchronize()
        """, id="a guarded import torch_npu goes with its try"),
    case("""
        import torch
        try:
            import torch_npu
        except ImportError:
            torch_npu = None
        """, """
        import torch
        try:
            pass
        except ImportError:
            torch_npu = None
        """, id="a try left empty gets pass"),
    case("""
        import torch
        import torch_npu as tnpu
        import torch_npu.npu

        tnpu.npu.synchronize()
        torch_npu.npu.empty_cache()
        g = torch.npu.NPUGraph()
        mod = torch.npu
        name = torch_npu.npu.utils.get_device_name(0)
        """, """
        import torch

        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        g = torch.cuda.CUDAGraph()
        mod = torch.cuda
        name = torch.cuda.get_device_name(0)
        """, id="aliases resolve; torch_npu.npu is torch.npu; NPUGraph -> CUDAGraph; the module as a value; "
               "what torch.npu exports from its submodules"),
    case("""
        from torch_npu.contrib import transfer_to_npu
        import torch

        x = torch.ones(2).cuda()
        """, """
        import torch

        x = torch.ones(2).cuda()
        """, id="transfer_to_npu: the file is CUDA code, the import goes"),
    case("""
        import torch
        import torch_npu
        from torch_npu.npu import amp

        scaler = amp.GradScaler()
        with amp.autocast():
            pass
        with torch.npu.amp.autocast(dtype=torch.float16):
            pass
        """, """
        import torch

        scaler = torch.cuda.amp.GradScaler()
        with torch.cuda.amp.autocast():
            pass
        with torch.cuda.amp.autocast(dtype=torch.float16):
            pass
        """, id="torch_npu.npu.amp and torch.npu.amp -> torch.cuda.amp"),
    case("""
        import torch
        import torch_npu

        torch.npu.set_device(0)
        torch.npu.get_soc_version()
        """, """
        import torch
        import torch_npu

        torch.cuda.set_device(0)
        torch.npu.get_soc_version()
        """, id="a name torch.cuda lacks stays, and so does import torch_npu"),
    case("""
        from models import net

        def f(x, model):
            assert x.is_npu
            model.npu()
            net.npu()
            return x.npu(non_blocking=True), x.untyped_storage().npu()
        """, """
        from models import net

        def f(x, model):
            assert x.is_cuda
            model.cuda()
            net.cuda()
            return x.cuda(non_blocking=True), x.untyped_storage().cuda()
        """, id="x.npu() and x.is_npu on tensors, modules and storages"),
    case('''
        """Runs on the npu: "npu" here stays."""
        import argparse
        import torch

        parser = argparse.ArgumentParser()
        parser.add_argument("--device", default="npu", help="device to use (npu or cpu)")
        parser.add_argument("--device-type", default='npu' if torch.npu.is_available() else "cpu")

        def main(rank, args, opts):
            # "npu:0" in a comment stays
            a = torch.device("npu", rank)
            b = torch.zeros(2, device="npu:0")
            c = f"npu:{rank}"
            d = "npu:%d" % rank
            e = "npu:{}".format(rank)
            g = "npu:" + str(rank)
            print("moving to npu", "npu")
            if args.device == "npu":
                pass
            return opts["npu"], {"npu": 1}, getattr(args, "npu"), opts.get("npu"), torch.autocast("npu")
        ''', '''
        """Runs on the npu: "npu" here stays."""
        import argparse
        import torch

        parser = argparse.ArgumentParser()
        parser.add_argument("--device", default="cuda", help="device to use (cuda or cpu)")
        parser.add_argument("--device-type", default='cuda' if torch.cuda.is_available() else "cpu")

        def main(rank, args, opts):
            # "npu:0" in a comment stays
            a = torch.device("cuda", rank)
            b = torch.zeros(2, device="cuda:0")
            c = f"cuda:{rank}"
            d = "cuda:%d" % rank
            e = "cuda:{}".format(rank)
            g = "cuda:" + str(rank)
            print("moving to npu", "cuda")
            if args.device in ("cuda", "npu"):
                pass
            return opts["npu"], {"npu": 1}, getattr(args, "npu"), opts.get("npu"), torch.autocast("cuda")
        ''', id="device strings, never a docstring, comment, message, key or attribute name"),
    case("""
        import os
        import torch.distributed as dist

        os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"
        seen = os.getenv("ASCEND_RT_VISIBLE_DEVICES")
        dist.init_process_group(backend="hccl")
        if dist.get_backend() == 'hccl':
            pass
        """, """
        import os
        import torch.distributed as dist

        os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
        seen = os.getenv("CUDA_VISIBLE_DEVICES")
        dist.init_process_group(backend="nccl")
        if dist.get_backend() == 'nccl':
            pass
        """, id="hccl -> nccl; ASCEND_RT_VISIBLE_DEVICES -> CUDA_VISIBLE_DEVICES"),
    case("""
        import torch.distributed as dist

        parser.add_argument("--dist-backend", default="hccl", type=str)
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url)
        """, """
        import torch.distributed as dist

        parser.add_argument("--dist-backend", default="nccl", type=str)
        dist.init_process_group(backend={"hccl": "nccl"}.get(args.dist_backend, args.dist_backend), init_method=args.dist_url)
        """, id="a backend from the command line: ModelZoo's launchers pass --dist-backend 'hccl'"),
    case("""
        import torch

        def accuracy(output, target, topk=(1,)):
            _, pred = output.topk(max(topk), 1, True, True)
            pred = pred.t()
            correct = pred.eq(target.view(1, -1).expand_as(pred))
            flat = target.view(-1).npu()
            return [correct[:k].view(-1).float().sum(0) for k in topk], flat
        """, """
        import torch

        def accuracy(output, target, topk=(1,)):
            _, pred = output.topk(max(topk), 1, True, True)
            pred = pred.t()
            correct = pred.eq(target.view(1, -1).expand_as(pred))
            flat = target.view(-1).cuda()
            return [correct[:k].reshape(-1).float().sum(0) for k in topk], flat
        """, id="ModelZoo's accuracy(): a view of eq's result, contiguous on the NPU alone, is a reshape"),
    case("""
        import os
        import torch
        import torch_npu

        os.environ["TASK_QUEUE_ENABLE"] = "1"
        os.environ.setdefault("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True")
        # binary kernels: no compile on the first step
        torch.npu.set_compile_mode(jit_compile=False)
        torch_npu.npu.set_compile_mode(jit_compile=False)
        torch.npu.config.allow_internal_format = False
        option = {"ACL_OP_COMPILER_CACHE_MODE": "enable"}
        torch.npu.set_option(option)
        if True:
            torch.npu.set_compile_mode(jit_compile=False)
        level = os.environ.get("ASCEND_GLOBAL_LOG_LEVEL")
        mode = torch.npu.set_compile_mode(jit_compile=False)
        """, """
        import os
        import torch
        import torch_npu

        # binary kernels: no compile on the first step
        option = {"ACL_OP_COMPILER_CACHE_MODE": "enable"}
        if True:
            pass
        level = os.environ.get("ASCEND_GLOBAL_LOG_LEVEL")
        mode = torch.npu.set_compile_mode(jit_compile=False)
        """, id="NPU-only tuning statements go (comments kept, a block left empty gets pass); an expression use stays"),
    case("""
        import torch
        from torch_npu.optim import NpuFusedSGD
        from apex.optimizers import NpuFusedAdam

        optimizer = NpuFusedSGD(model.parameters(), lr=0.1, momentum=0.9)
        other = NpuFusedAdam(model.parameters(), lr=1e-3)
        optimizer.clip_grad_norm_fused_(max_norm=10, norm_type=2)
        somebody.clip_grad_norm_fused_(10)
        assert isinstance(optimizer, NpuFusedSGD)
        """, """
        import torch
        import torchport.optim

        optimizer = torchport.optim.NpuFusedSGD(model.parameters(), lr=0.1, momentum=0.9)
        other = torchport.optim.NpuFusedAdam(model.parameters(), lr=1e-3)
        torch.nn.utils.clip_grad_norm_([p for group in optimizer.param_groups for p in group["params"]], max_norm=10, norm_type=2)
        somebody.clip_grad_norm_fused_(10)
        assert isinstance(optimizer, torchport.optim.NpuFusedSGD)
        """, id="NpuFused optimizers -> torchport.optim's twins off CUDA; clip_grad_norm_fused_ of one made here"),
    case("""
        import torch
        import torch_npu

        def forward(x, w, b):
            x = torch_npu.npu_format_cast(x, 29)
            y = torch_npu.npu_linear(x + 1, w, bias=b) * 2
            z = torch_npu.npu_linear(x, w).relu()
            t = torch_npu.npu_confusion_transpose(y, (1, 0), (4,), True)
            return x.npu_format_cast(2), torch_npu.npu_iou(y, z)
        """, """
        import torch
        import torch_npu

        def forward(x, w, b):
            y = torch.nn.functional.linear((x + 1), w, b) * 2
            z = torch.nn.functional.linear(x, w, None).relu()
            t = torch.reshape(torch.permute(y, (1, 0)), (4,))
            return x, torch_npu.npu_iou(y, z)
        """, id="kernels inline from apis/npu_ops (defaults filled, operands in parentheses); one it lacks stays"),
    case("""
        import torch
        import torch_npu

        config = torch_npu.profiler._ExperimentalConfig(profiler_level=torch_npu.profiler.ProfilerLevel.Level1)
        with torch_npu.profiler.profile(
            activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],
            on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./prof"),
            experimental_config=config,
        ) as prof:
            prof.step()
        """, """
        import torch

        with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
            on_trace_ready=torch.profiler.tensorboard_trace_handler("./prof"),
        ) as prof:
            prof.step()
        """, id="torch_npu.profiler -> torch.profiler, ProfilerActivity.NPU -> CUDA, experimental_config dropped"),
    case("""
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=128.0, combine_grad=True)
        """, """
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=128.0)
        """, id="Ascend apex's combine_grad goes"),
    case("""
        from torch.hub import load_state_dict_from_url
        import torch.npu
        import os
        NPU_CALCULATE_DEVICE = 0
        if os.getenv('NPU_CALCULATE_DEVICE') and str.isdigit(os.getenv('NPU_CALCULATE_DEVICE')):
            NPU_CALCULATE_DEVICE = int(os.getenv('NPU_CALCULATE_DEVICE'))
        if torch.npu.current_device() != NPU_CALCULATE_DEVICE:
            torch.npu.set_device(f'npu:{NPU_CALCULATE_DEVICE}')
        model = torch.nn.Linear(2, 2)
        """, """
        from torch.hub import load_state_dict_from_url
        import torch
        import os
        NPU_CALCULATE_DEVICE = 0
        if os.getenv('NPU_CALCULATE_DEVICE') and str.isdigit(os.getenv('NPU_CALCULATE_DEVICE')):
            NPU_CALCULATE_DEVICE = int(os.getenv('NPU_CALCULATE_DEVICE'))
        if torch.cuda.current_device() != NPU_CALCULATE_DEVICE:
            torch.cuda.set_device(f'cuda:{NPU_CALCULATE_DEVICE}')
        model = torch.nn.Linear(2, 2)
        """, id="ModelZoo's import torch.npu, the file's only import of torch, stays import torch"),
    case("""
        import torch

        torch.set_default_tensor_type("torch.npu.FloatTensor")
        y = x.type("torch.npu.HalfTensor")
        """, """
        import torch

        torch.set_default_tensor_type("torch.cuda.FloatTensor")
        y = x.type("torch.cuda.HalfTensor")
        """, id="legacy tensor type names written as strings"),
    case("""
        import torch
        import apex
        try:
            from torch_npu.utils.profiler import Profile
        except ImportError:
            class Profile:
                pass

        class Net(torch.nn.Module):
            def forward(self, x):
                return self.npu_format_cast(x.npu_format_cast(2))

        profile = Profile()
        optimizer = apex.optimizers.NpuFusedSGD(params, lr=0.1)
        """, """
        import torch
        import apex
        try:
            from torch_npu.utils.profiler import Profile
        except ImportError:
            class Profile:
                pass
        import torchport.optim

        class Net(torch.nn.Module):
            def forward(self, x):
                return self.npu_format_cast(x)

        profile = Profile()
        optimizer = torchport.optim.NpuFusedSGD(params, lr=0.1)
        """, id="a guarded import with the file's own fallback stays; a method of the script's own; apex.optimizers.NpuFused*"),
    case("""
        import torch
        import deepspeed_npu

        class NpuLinear(torch.nn.Linear):
            def forward(self, x):
                return torch.npu_linear(x, self.weight, self.bias)

        y = torch.npu_mish(x)
        """, """
        import torch

        class NpuLinear(torch.nn.Linear):
            def forward(self, x):
                return torch.nn.functional.linear(x, self.weight, self.bias)

        y = torch.nn.functional.mish(x)
        """, id="torch_npu 1.x's kernels in torch itself; an Ascend adapter imported for its effect"),
    case("""
        import torch

        @torch.jit.script
        def gelu_impl(x):
            return torch.fast_gelu(x)
        """, """
        import torch

        @torch.jit.script
        def gelu_impl(x):
            return x * torch.sigmoid(1.702 * x)
        """, id="torch_npu 1.x's kernel without the npu_ prefix, in a file that names nothing else of the NPU"),
    case("""
        import torch

        def profiled(step, on, device):
            with torch.autograd.profiler.profile(use_npu=True) as a:
                step()
            with torch.autograd.profiler.profile(use_npu = on) as b:
                step()
            if device.startswith('npu'):
                prof_kwargs = {'use_npu': True}
            else:
                prof_kwargs = {}
            with torch.autograd.profiler.profile(**prof_kwargs) as c:
                step()
        """, """
        import torch

        def profiled(step, on, device):
            with torch.autograd.profiler.profile(use_device="cuda") as a:
                step()
            with torch.autograd.profiler.profile(use_device = "cuda" if on else None) as b:
                step()
            if device.startswith('cuda'):
                prof_kwargs = {'use_device': 'cuda'}
            else:
                prof_kwargs = {}
            with torch.autograd.profiler.profile(**prof_kwargs) as c:
                step()
        """, id="torch_npu's use_npu= of torch's autograd profiler -> use_device='cuda', also in a dict passed as **kwargs"),
    case("""
        import torch_npu

        def init(module, x):
            module.weight.data = module.weight.data.npu_format_cast(29)
            x = torch_npu.npu_format_cast(x, 2)
            y = torch_npu.npu_format_cast(x, 2)
            return y
        """, """
        def init(module, x):
            y = x
            return y
        """, id="a layout cast assigned back to its input goes with its statement"),
    case("""
        import torch
        from torch_npu.npu import synchronize, get_soc_version
        from torch_npu.npu.amp import GradScaler
        import torch_npu.npu.amp as npu_amp
        from torch_npu import profiler as prof

        synchronize()
        s = GradScaler()
        with npu_amp.autocast():
            pass
        with prof.profile(activities=[prof.ProfilerActivity.NPU]) as p:
            pass
        v = get_soc_version()
        """, """
        import torch
        from torch_npu.npu import get_soc_version

        torch.cuda.synchronize()
        s = torch.cuda.amp.GradScaler()
        with torch.cuda.amp.autocast():
            pass
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
            pass
        v = get_soc_version()
        """, id="names imported from torch_npu's modules; only what is left keeps its import"),
]
