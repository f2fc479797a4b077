"""The apex forms the conversion cannot rewrite with confidence, each as (apex source, the same
source importing the stand-in package, the reason the TP307 rows give)."""

from __future__ import annotations

from textwrap import dedent

import pytest


def case(before: str, after: str, why: str, id: str):
    return pytest.param(dedent(before).lstrip("\n"), dedent(after).lstrip("\n"), why, id=id)


COMPAT = [
    case("""
        from apex import amp

        def main(args):
            model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        """, """
        from torchport.compat.apex import amp

        def main(args):
            model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        """, "the opt level is not known before the script runs (line 4)", id="opt_level from the command line"),
    case("""
        try:
            from apex import amp
            from apex.parallel import DistributedDataParallel as ApexDDP
            has_apex = True
        except ImportError:
            has_apex = False

        model.amp = amp
        """, """
        try:
            from torchport.compat.apex import amp
            from torchport.compat.apex.parallel import DistributedDataParallel as ApexDDP
            has_apex = True
        except ImportError:
            has_apex = False

        model.amp = amp
        """, "passed or kept as a value, not called) (line 8)", id="amp kept as a value"),
    case("""
        import apex
        import apex.amp as amp

        model = apex.contrib.clip_grad.clip_grad_norm_(params, 1.0)
        """, """
        import torchport.compat.apex as apex
        import torchport.compat.apex.amp as amp

        model = apex.contrib.clip_grad.clip_grad_norm_(params, 1.0)
        """, "an apex name with no native replacement) (line 4)", id="import apex, a name with no native twin"),
    case("""
        from apex.fp16_utils import FP16_Optimizer

        optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)
        """, """
        from torchport.compat.apex.fp16_utils import FP16_Optimizer

        optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)
        """, "has no one-to-one native form (line 3)", id="apex.fp16_utils"),
    case("""
        from apex.optimizers import FusedAdam

        optimizer = FusedAdam(params, lr=1e-3, amsgrad=True)
        """, """
        from torchport.compat.apex.optimizers import FusedAdam

        optimizer = FusedAdam(params, lr=1e-3, amsgrad=True)
        """, "apex's FusedAdam refuses AMSGrad (line 3)", id="an optimizer argument native torch does not follow"),
    case("""
        from apex import amp

        def train(model, optimizer):
            loss = model()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()

        def main(args):
            if args.fp16:
                model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            train(model, optimizer)
        """, """
        from torchport.compat.apex import amp

        def train(model, optimizer):
            loss = model()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()

        def main(args):
            if args.fp16:
                model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            train(model, optimizer)
        """, "a scaler made there would not be seen here (line 5)", id="initialize under an if, the loss scaled in another function"),
    case("""
        from apex import amp

        def save(path):
            torch.save({"amp": amp.state_dict()}, path)
        """, """
        from torchport.compat.apex import amp

        def save(path):
            torch.save({"amp": amp.state_dict()}, path)
        """, "without amp.initialize in this file", id="amp state in a file without initialize"),
    case("""
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        if args.amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        """, """
        from torchport.compat.apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        if args.amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        """, "the scaler would not follow the branch taken (line 5)", id="scale_loss under a condition amp is not under"),
    case("""
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        with amp.scale_loss(compute(), optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        """, """
        from torchport.compat.apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        with amp.scale_loss(compute(), optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        """, "the forward pass to run under autocast is not known (line 4)", id="the loss's forward pass not found"),
    case("""
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss = model(x)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step(closure)
        """, """
        from torchport.compat.apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss = model(x)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step(closure)
        """, "a step the GradScaler cannot take as it is (line 7)", id="a step with a closure"),
    case("""
        import apex.amp
        from apex.parallel import DistributedDataParallel

        model = DistributedDataParallel(model, gradient_predivide_factor=4.0)
        """, """
        import torchport.compat.apex as apex
        from torchport.compat.apex.parallel import DistributedDataParallel

        model = DistributedDataParallel(model, gradient_predivide_factor=4.0)
        """, "torch's DDP divides by the world size only (line 4)", id="import apex.amp, apex DDP pre-dividing gradients"),
    case("""
        from apex import amp

        def clip(optimizer):
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss = model(x)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        clip(optimizer)
        optimizer.step()
        """, """
        from torchport.compat.apex import amp

        def clip(optimizer):
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss = model(x)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        clip(optimizer)
        optimizer.step()
        """, "where to unscale them is not known (line 4)", id="gradients clipped in a function away from the backward"),
    case("""
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for step, (x, y) in enumerate(loader):
            loss = crit(model(x), y)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
            if (step + 1) % 4 == 0:
                optimizer.step()
        """, """
        from torchport.compat.apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for step, (x, y) in enumerate(loader):
            loss = crit(model(x), y)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
            if (step + 1) % 4 == 0:
                optimizer.step()
        """, "unscaled twice before a step (line 8)", id="clipping each accumulated micro-batch"),
    case("""
        from apex.optimizers import FusedAdam

        optimizer = FusedAdam(model.parameters(), **optimizer_kwargs)
        """, """
        from torchport.compat.apex.optimizers import FusedAdam

        optimizer = FusedAdam(model.parameters(), **optimizer_kwargs)
        """, "the unpacked arguments fill is not known before the script runs (line 3)",
        id="an optimizer's arguments unpacked from a dict (FastPitch)"),
]
