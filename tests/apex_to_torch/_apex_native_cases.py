"""The apex forms the conversion makes native, each as (apex source, native source in CUDA's
dialect): the specification of apex_to_torch read in one place."""

from __future__ import annotations

from textwrap import dedent

import pytest


def case(before: str, after: str, id: str):
    return pytest.param(dedent(before).lstrip("\n"), dedent(after).lstrip("\n"), id=id)


NATIVE = [
    case("""
        import torch
        from apex import amp

        def main():
            model = Net().cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            for images, target in loader:
                output = model(images)
                loss = criterion(output, target)
                optimizer.zero_grad()
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                optimizer.step()
                lr_scheduler.step()
        """, """
        import torch

        def main():
            model = Net().cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scaler = torch.amp.GradScaler("cuda")
            for images, target in loader:
                with torch.amp.autocast("cuda", dtype=torch.float16):
                    output = model(images)
                    loss = criterion(output, target)
                optimizer.zero_grad()
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                lr_scheduler.step()
        """, id="plain O1 loop"),
    case("""
        import torch
        from apex import amp

        def main(args):
            model = Net().cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            if args.fp16:
                model, optimizer = amp.initialize(model, optimizer, opt_level="O2", keep_batchnorm_fp32=True)
            for step, (x, y) in enumerate(loader):
                outputs = model(x, labels=y)
                loss = outputs.loss / args.accum
                if args.fp16:
                    with amp.scale_loss(loss, optimizer, delay_unscale=(step + 1) % args.accum != 0) as scaled_loss:
                        scaled_loss.backward()
                else:
                    loss.backward()
                if (step + 1) % args.accum == 0:
                    if args.fp16:
                        torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_grad_norm)
                    else:
                        torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                    optimizer.step()
                    model.zero_grad()
        """, """
        import torch

        def main(args):
            model = Net().cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scaler = torch.amp.GradScaler("cuda", enabled=args.fp16)
            for step, (x, y) in enumerate(loader):
                with torch.amp.autocast("cuda", dtype=torch.float16, enabled=args.fp16):
                    outputs = model(x, labels=y)
                    loss = outputs.loss / args.accum
                if args.fp16:
                    scaler.scale(loss).backward()
                else:
                    loss.backward()
                if (step + 1) % args.accum == 0:
                    if args.fp16:
                        scaler.unscale_(optimizer)
                        torch.nn.utils.clip_grad_norm_([p for group in optimizer.param_groups for p in group["params"]], args.max_grad_norm)
                    else:
                        torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                    scaler.step(optimizer)
                    scaler.update()
                    model.zero_grad()
        """, id="O2 under if args.fp16, gradient accumulation, clipping through master_params"),
    case("""
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1", loss_scale=128.0, num_losses=2)
        for x, y in loader:
            optimizer.zero_grad()
            out = model(x)
            loss_a = crit(out, y)
            loss_b = aux(out)
            with amp.scale_loss(loss_a, optimizer, loss_id=0) as scaled:
                scaled.backward(retain_graph=True)
            with amp.scale_loss(loss_b, optimizer, loss_id=1) as scaled:
                scaled.backward()
            optimizer.step()
        """, """
        import torch

        scaler = torch.amp.GradScaler("cuda", init_scale=128.0, growth_interval=2147483647)
        for x, y in loader:
            optimizer.zero_grad()
            with torch.amp.autocast("cuda", dtype=torch.float16):
                out = model(x)
                loss_a = crit(out, y)
                loss_b = aux(out)
            scaler.scale(loss_a).backward(retain_graph=True)
            scaler.scale(loss_b).backward()
            scaler.step(optimizer)
            scaler.update()
        """, id="static loss scale, two losses of one forward pass, num_losses and loss_id"),
    case("""
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O3")
        for x, y in loader:
            loss = crit(model(x.half()), y)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        """, """
        import torch

        scaler = torch.amp.GradScaler("cuda", enabled=False)
        model = model.half()
        for x, y in loader:
            loss = crit(model(x.half()), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        """, id="O3: the model cast to half, nothing scaled"),
    case("""
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1", enabled=False)
        for x, y in loader:
            loss = crit(model(x), y)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        """, """
        import torch

        scaler = torch.amp.GradScaler("cuda", enabled=False)
        for x, y in loader:
            loss = crit(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        """, id="enabled=False: a scaler that does nothing, no autocast"),
    case('''
        """A trainer."""
        import torch
        try:
            from apex import amp
        except ImportError:
            amp = None


        class Trainer:
            def __init__(self, model, optimizer):
                self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

            def train_step(self, batch):
                logits = self.model(batch["x"])
                loss = self.loss_fn(logits, batch["y"])
                self.backward(loss)

            def backward(self, loss):
                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()

            def save(self):
                return {"amp": amp.state_dict()}

            def load(self, checkpoint):
                amp.load_state_dict(checkpoint["amp"])
        ''', '''
        """A trainer."""
        import torch
        scaler = torch.amp.GradScaler("cuda")


        class Trainer:
            def __init__(self, model, optimizer):
                self.model = model
                self.optimizer = optimizer

            def train_step(self, batch):
                with torch.amp.autocast("cuda", dtype=torch.float16):
                    logits = self.model(batch["x"])
                    loss = self.loss_fn(logits, batch["y"])
                self.backward(loss)

            def backward(self, loss):
                scaler.scale(loss).backward()
                scaler.step(self.optimizer)
                scaler.update()
                self.optimizer.zero_grad()

            def save(self):
                return {"amp": scaler.state_dict()}

            def load(self, checkpoint):
                scaler.load_state_dict(checkpoint["amp"])
        ''', id="a trainer class: the scaler at the module's top, amp state in checkpoints, except ImportError: amp = None"),
    case("""
        import torch
        from apex import amp

        def amp_backward(loss, optimizer):
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x, y in loader:
            loss = crit(model(x), y)
            optimizer.zero_grad()
            amp_backward(loss, optimizer)
            optimizer.step()
        """, """
        import torch

        def amp_backward(loss, optimizer):
            scaler.scale(loss).backward()

        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            with torch.amp.autocast("cuda", dtype=torch.float16):
                loss = crit(model(x), y)
            optimizer.zero_grad()
            amp_backward(loss, optimizer)
            scaler.step(optimizer)
            scaler.update()
        """, id="a helper that scales the loss, its caller's forward under autocast"),
    case("""
        import torch
        try:
            from apex import amp
            has_apex = True
        except ImportError:
            has_apex = False

        def main(args):
            use_amp = has_apex and args.amp
            if use_amp:
                model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            for x, y in loader:
                loss = crit(model(x), y)
                if use_amp:
                    with amp.scale_loss(loss, optimizer) as scaled_loss:
                        scaled_loss.backward()
                else:
                    loss.backward()
                optimizer.step()
        """, """
        import torch
        has_apex = True

        def main(args):
            use_amp = has_apex and args.amp
            scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
            for x, y in loader:
                with torch.amp.autocast("cuda", dtype=torch.float16, enabled=use_amp):
                    loss = crit(model(x), y)
                if use_amp:
                    scaler.scale(loss).backward()
                else:
                    loss.backward()
                scaler.step(optimizer)
                scaler.update()
        """, id="optional apex: has_apex kept true, the apex branch made native"),
    case("""
        import torch
        from apex import amp

        amp.register_half_function(torch, "einsum")

        @amp.float_function
        def softmax(x):
            return x.softmax(-1)

        def main():
            [netG, netD], [optG, optD] = amp.initialize([netG, netD], [optG, optD], opt_level="O1", num_losses=2)
            for real in loader:
                fake = netG(noise())
                loss_d = crit(netD(real), 1) + crit(netD(fake.detach()), 0)
                optD.zero_grad()
                with amp.scale_loss(loss_d, optD, loss_id=0) as errD_scaled:
                    errD_scaled.backward()
                optD.step()
                loss_g = crit(netD(fake), 1)
                optG.zero_grad()
                with amp.scale_loss(loss_g, optG, loss_id=1) as errG_scaled:
                    errG_scaled.backward()
                optG.step()
                with amp.disable_casts():
                    stats = compute(real)
        """, """
        import torch

        def softmax(x):
            return x.softmax(-1)

        def main():
            scaler = torch.amp.GradScaler("cuda")
            for real in loader:
                with torch.amp.autocast("cuda", dtype=torch.float16):
                    fake = netG(noise())
                    loss_d = crit(netD(real), 1) + crit(netD(fake.detach()), 0)
                optD.zero_grad()
                scaler.scale(loss_d).backward()
                scaler.step(optD)
                with torch.amp.autocast("cuda", dtype=torch.float16):
                    loss_g = crit(netD(fake), 1)
                optG.zero_grad()
                scaler.scale(loss_g).backward()
                scaler.step(optG)
                scaler.update()
                with torch.amp.autocast("cuda", enabled=False):
                    stats = compute(real)
        """, id="two models and optimizers (a GAN): one update after the last step; registrations; disable_casts"),
    case("""
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x, y in loader:
            loss = crit(model(x), y)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
                print(scaled_loss.item())
            optimizer.step()
        """, """
        import torch

        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            with torch.amp.autocast("cuda", dtype=torch.float16):
                loss = crit(model(x), y)
            scaled_loss = scaler.scale(loss)
            scaled_loss.backward()
            print(scaled_loss.item())
            scaler.step(optimizer)
            scaler.update()
        """, id="the scaled loss read again in the with: bound first"),
    case("""
        from apex.optimizers import FusedAdam, FusedLAMB

        adam = FusedAdam(model.parameters(), lr=1e-3, set_grad_none=True)
        adam_l2 = FusedAdam(model.parameters(), lr=1e-3, adam_w_mode=False)
        lamb = FusedLAMB(model.parameters(), 1e-3, weight_decay=0.01, use_nvlamb=True)
        """, """
        from torchport.optim import FusedAdam, FusedAdamW, FusedLamb

        adam = FusedAdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
        adam_l2 = FusedAdam(model.parameters(), lr=1e-3, weight_decay=0.0)
        lamb = FusedLamb(model.parameters(), 1e-3, weight_decay=0.01, always_adapt=True)
        """, id="apex.optimizers from-imported -> torchport.optim's twins, apex's weight decay default"),
    case("""
        import torch
        import apex

        optimizer = apex.optimizers.FusedSGD(model.parameters(), lr=0.1, momentum=0.9)
        model = apex.parallel.convert_syncbn_model(model)
        model = apex.parallel.DistributedDataParallel(model, delay_allreduce=True)
        norm = apex.normalization.FusedRMSNorm(512)
        """, """
        import torch
        import torchport.optim

        optimizer = torchport.optim.FusedSGD(model.parameters(), lr=0.1, momentum=0.9)
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = torch.nn.parallel.DistributedDataParallel(model)
        norm = torch.nn.RMSNorm(512, eps=1e-5)
        """, id="import apex: optimizers, convert_syncbn_model, DDP (tuning dropped), FusedRMSNorm's eps"),
    case("""
        from apex.parallel import DistributedDataParallel as DDP, SyncBatchNorm
        from apex.normalization import FusedLayerNorm

        class Block(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.norm = FusedLayerNorm(dim, eps=1e-6)
                self.bn = SyncBatchNorm(dim)

        model = DDP(Block(8).cuda())
        """, """
        import torch

        class Block(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.norm = torch.nn.LayerNorm(dim, eps=1e-6)
                self.bn = torch.nn.SyncBatchNorm(dim)

        model = torch.nn.parallel.DistributedDataParallel(Block(8).cuda())
        """, id="from apex.parallel / apex.normalization, with an alias"),
    case("""
        import torch
        OPT_LEVEL = "O2"

        def train(args, model, optimizer):
            scaler = StandardScaler()
            if args.fp16:
                try:
                    from apex import amp
                except ImportError:
                    raise ImportError("Please install apex from https://www.github.com/nvidia/apex to use fp16 training.")
                model, optimizer = amp.initialize(model, optimizer, opt_level=OPT_LEVEL)
            for batch in loader:
                loss = model(**batch)[0]
                if args.fp16:
                    with amp.scale_loss(loss, optimizer) as scaled_loss:
                        scaled_loss.backward()
                else:
                    loss.backward()
                optimizer.step()
        """, """
        import torch
        OPT_LEVEL = "O2"

        def train(args, model, optimizer):
            scaler = StandardScaler()
            grad_scaler = torch.amp.GradScaler("cuda", enabled=args.fp16)
            for batch in loader:
                with torch.amp.autocast("cuda", dtype=torch.float16, enabled=args.fp16):
                    loss = model(**batch)[0]
                if args.fp16:
                    grad_scaler.scale(loss).backward()
                else:
                    loss.backward()
                grad_scaler.step(optimizer)
                grad_scaler.update()
        """, id="transformers' style: apex imported under if args.fp16, an opt level from a module constant, the name scaler taken"),
    case("""
        import torch
        import apex
        from apex import amp, optimizers

        optimizer = optimizers.FusedAdam(model.parameters(), lr=1e-3, weight_decay=0.01)
        model, optimizer = apex.amp.initialize(model, optimizer)
        for x in loader:
            loss = model(x).sum()
            with apex.amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        """, """
        import torch
        import torchport.optim

        optimizer = torchport.optim.FusedAdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
        scaler = torch.amp.GradScaler("cuda")
        for x in loader:
            with torch.amp.autocast("cuda", dtype=torch.float16):
                loss = model(x).sum()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        """, id="apex.amp by its qualified name, apex's default opt level O1"),
    case("""
        import torch
        from apex import amp
        from apex.optimizers import NpuFusedSGD

        optimizer = NpuFusedSGD(model.parameters(), lr=0.1, momentum=0.9)
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=128.0, combine_grad=True)
        for param, saved in zip(amp.master_params(optimizer), checkpoint["master params"]):
            param.data.copy_(saved.data)
        for x, y in loader:
            loss = crit(model(x), y)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            grad_norm = 0.0
            for p in amp.master_params(optimizer):
                grad_norm += p.grad.norm() ** 2
            optimizer.step()
        """, """
        import torch
        from torchport.optim import NpuFusedSGD

        optimizer = NpuFusedSGD(model.parameters(), lr=0.1, momentum=0.9)
        scaler = torch.amp.GradScaler("cuda", init_scale=128.0, growth_interval=2147483647)
        for param, saved in zip([p for group in optimizer.param_groups for p in group["params"]], checkpoint["master params"]):
            param.data.copy_(saved.data)
        for x, y in loader:
            with torch.amp.autocast("cuda", dtype=torch.float16):
                loss = crit(model(x), y)
            scaler.scale(loss).backward()
            grad_norm = 0.0
            scaler.unscale_(optimizer)
            for p in [p for group in optimizer.param_groups for p in group["params"]]:
                grad_norm += p.grad.norm() ** 2
            scaler.step(optimizer)
            scaler.update()
        """, id="Ascend's guide: combine_grad and NpuFusedSGD; master_params restored from a checkpoint (not unscaled) and "
               "read after the backward (unscaled first)"),
    case("""
        import torch
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x, y in loader:
            with torch.cuda.amp.autocast():
                loss = crit(model(x), y)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        """, """
        import torch

        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            with torch.cuda.amp.autocast():
                loss = crit(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        """, id="the loss computed under an autocast already: not wrapped twice"),
    case("""
        from apex import amp

        def forward(self, x):
            with amp.disable_casts():
                return self.op(x.float())
        """, """
        import torch

        def forward(self, x):
            with torch.amp.autocast("cuda", enabled=False):
                return self.op(x.float())
        """, id="disable_casts in a model's file, no initialize there"),
    case("""
        import torch
        from apex import amp

        def amp_backward(loss, optimizer):
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x, y in loader:
            loss = crit(model(x), y)
            amp_backward(loss, optimizer)
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
            optimizer.step()
        """, """
        import torch

        def amp_backward(loss, optimizer):
            scaler.scale(loss).backward()

        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            with torch.amp.autocast("cuda", dtype=torch.float16):
                loss = crit(model(x), y)
            amp_backward(loss, optimizer)
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_([p for group in optimizer.param_groups for p in group["params"]], 1.0)
            scaler.step(optimizer)
            scaler.update()
        """, id="clipping after a helper's backward: unscaled first"),
]
