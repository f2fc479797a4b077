"""apex.amp on torch.amp: a loop written for apex trains as the same loop hand-written with
torch.autocast + GradScaler, on the CPU with and without native bfloat16."""

from __future__ import annotations

import pytest
import torch

from torchport.compat.apex import amp, optimizers
from torchport.optim import FusedAdamW

STEPS = 6


def make_model(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 3))


def batches(n: int = STEPS):
    generator = torch.Generator().manual_seed(1)
    return [(torch.randn(16, 8, generator=generator), torch.randint(0, 3, (16,), generator=generator)) for _ in range(n)]


def apex_loop(opt_level="O1", clip=None, **options):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level, **options)
    for x, y in batches():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), clip)
        optimizer.step()
    return loss.item(), model


def native_loop(dtype, enabled, clip=None):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.amp.GradScaler("cpu")
    for x, y in batches():
        with torch.autocast("cpu", dtype=dtype, enabled=enabled):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        if clip:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        scaler.step(optimizer)
        scaler.update()
    return loss.item(), model


@pytest.mark.parametrize("native", [True, False], ids=["native bfloat16", "no native bfloat16"])
@pytest.mark.parametrize("opt_level", ["O1", "O2"])
def test_an_apex_loop_trains_as_the_hand_written_torch_amp_loop(cpu_bf16, native, opt_level):
    cpu_bf16(native)
    ours, _ = apex_loop(opt_level, clip=1.0)
    theirs, _ = native_loop(torch.bfloat16, native, clip=1.0)
    # (1e-3 is the promise; the same ops give the same numbers, and bfloat16 against float32
    # differs here by about 6e-5, so 1e-5 also tells whether autocast was on as it should be)
    assert ours == pytest.approx(theirs, rel=1e-5)


@pytest.mark.parametrize("native", [True, False], ids=["native bfloat16", "no native bfloat16"])
def test_the_forward_runs_in_bfloat16_only_where_the_cpu_computes_it_natively(cpu_bf16, native):
    cpu_bf16(native)
    model = make_model()
    seen = []
    model[0].register_forward_hook(lambda module, args, output: seen.append(output.dtype))
    model = amp.initialize(model, opt_level="O1")
    output = model(torch.randn(2, 8))
    assert seen == [torch.bfloat16 if native else torch.float32]
    assert output.dtype is torch.float32  # (so that a loss computed after it runs in float32)


def test_o0_and_disabled_amp_change_nothing():
    reference, _ = native_loop(torch.float32, False)
    assert apex_loop("O0")[0] == pytest.approx(reference, rel=1e-6)
    assert apex_loop("O1", enabled=False)[0] == pytest.approx(reference, rel=1e-6)


def test_o3_casts_the_model_to_the_half_type_and_its_outputs_to_float32():
    model = amp.initialize(make_model(), opt_level="O3")
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
    assert model(torch.randn(2, 8)).dtype is torch.float32


def test_models_and_optimizers_come_back_in_the_structure_given():
    m1, m2 = make_model(), make_model(1)
    o1, o2 = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (m1, m2))
    assert amp.initialize(m1, o1)[1] is o1
    models, opts = amp.initialize([m1, m2], [o1, o2])
    assert models == [m1, m2] and opts == [o1, o2]
    assert amp.initialize(m1) is m1


def test_a_step_with_overflowing_gradients_is_skipped_and_the_scale_halved():
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    before = [p.detach().clone() for p in model.parameters()]
    x, y = batches(1)[0]
    with amp.scale_loss(torch.nn.functional.cross_entropy(model(x), y) * float("inf"), optimizer) as scaled:
        scaled.backward()
    optimizer.step()
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert amp.state_dict()["loss_scaler0"] == {"loss_scale": 2.0**15, "unskipped": 0}
    optimizer.zero_grad()
    with amp.scale_loss(torch.nn.functional.cross_entropy(model(x), y), optimizer) as scaled:
        scaled.backward()
    optimizer.step()
    assert not all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert amp.state_dict()["loss_scaler0"] == {"loss_scale": 2.0**15, "unskipped": 1}
    assert amp._amp_state.loss_scalers[0].loss_scale() == 2.0**15  # (as scripts read it)


def test_scale_loss_unscales_on_exit_so_clipping_sees_true_gradients():
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O0", loss_scale=1024.0)
    x, y = batches(1)[0]
    loss = torch.nn.functional.cross_entropy(model(x), y)
    with amp.scale_loss(loss, optimizer) as scaled:
        assert scaled.item() == pytest.approx(loss.item() * 1024)
        scaled.backward()
    ours = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    assert all(torch.allclose(a, p.grad, rtol=1e-5, atol=1e-7) for a, p in zip(ours, model.parameters()))


def test_the_state_dict_round_trips_in_apexs_format_and_loads_a_grad_scalers():
    apex_loop("O1", num_losses=2)
    saved = amp.state_dict()
    assert list(saved) == ["loss_scaler0", "loss_scaler1"] and saved["loss_scaler0"]["unskipped"] == STEPS
    amp.initialize(make_model(), opt_level="O1", num_losses=2)
    assert amp.state_dict() != saved
    amp.load_state_dict(saved)
    assert amp.state_dict() == saved
    native = torch.amp.GradScaler("cpu", init_scale=256.0).state_dict()
    amp.load_state_dict(native)
    assert amp.state_dict()["loss_scaler0"] == {"loss_scale": 256.0, "unskipped": 0}
    with pytest.raises(RuntimeError, match="Unexpected key"):
        amp.load_state_dict({"loss_scaler0": saved["loss_scaler0"], "bogus": {}})


def test_two_optimizers_step_through_one_scale(cpu_bf16):
    cpu_bf16(True)

    def run(apex: bool):
        model = make_model()
        head, body = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (model[2], model[0]))
        scaler = torch.amp.GradScaler("cpu")
        if apex:
            model, [head, body] = amp.initialize(model, [head, body], opt_level="O1")
        for x, y in batches():
            head.zero_grad(), body.zero_grad()
            if apex:
                with amp.scale_loss(torch.nn.functional.cross_entropy(model(x), y), [head, body]) as scaled:
                    scaled.backward()
                head.step(), body.step()
            else:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(head), scaler.step(body), scaler.update()
        return [p.detach() for p in model.parameters()]

    assert all(torch.allclose(a, b, rtol=1e-3, atol=1e-5) for a, b in zip(run(True), run(False)))


def test_delayed_unscaling_accumulates_gradients_as_the_scaler_does():
    def run(apex: bool):
        model = make_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        if apex:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O0", loss_scale="dynamic")
        data = batches(4)
        for first, second in zip(data[::2], data[1::2]):
            optimizer.zero_grad()
            for (x, y), last in ((first, False), (second, True)):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                if apex:
                    with amp.scale_loss(loss, optimizer, delay_unscale=not last) as scaled:
                        scaled.backward()
                else:
                    scaler.scale(loss).backward()
            if apex:
                optimizer.step()
            else:
                scaler.step(optimizer), scaler.update()
        return [p.detach() for p in model.parameters()]

    assert all(torch.allclose(a, b, rtol=1e-6, atol=1e-7) for a, b in zip(run(True), run(False)))


def test_an_lr_scheduler_made_after_initialize_wraps_the_patched_step():
    model = make_model()
    optimizer = optimizers.FusedAdam(model.parameters(), lr=0.01)
    assert isinstance(optimizer, FusedAdamW)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    x, y = batches(1)[0]
    with amp.scale_loss(torch.nn.functional.cross_entropy(model(x), y), optimizer) as scaled:
        scaled.backward()
    optimizer.step()
    scheduler.step()
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.005)


def test_calls_before_initialize_fail_as_apexs_do(monkeypatch):
    monkeypatch.setattr(amp, "_state", None)
    with pytest.raises(RuntimeError, match="amp.initialize"):
        with amp.scale_loss(torch.ones(()), None):
            pass
    with pytest.raises(RuntimeError, match="before amp.initialize"):
        amp.state_dict()


def test_registrations_and_their_decorators_change_nothing():
    def f(x):
        return x

    assert amp.half_function(f) is f and amp.float_function(f) is f and amp.promote_function(f) is f
    assert amp.register_half_function(torch, "matmul") is None
    with amp.disable_casts():
        assert not torch.is_autocast_enabled("cpu")


@pytest.mark.parametrize("loss_ids", [(0, 0), (0, 1)], ids=["one loss scale", "a loss scale each"])
def test_two_backward_passes_through_one_optimizer_add_their_true_gradients(loss_ids):
    def run(apex: bool):
        model = make_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        if apex:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O0", loss_scale="dynamic", num_losses=2)
        for x, y in batches(3):
            optimizer.zero_grad()
            losses = [torch.nn.functional.cross_entropy(model(x), y), model(x).pow(2).mean()]
            if apex:
                for loss, loss_id in zip(losses, loss_ids):
                    with amp.scale_loss(loss, optimizer, loss_id=loss_id) as scaled:
                        scaled.backward()
            else:
                sum(losses).backward()
            optimizer.step()
        return [p.detach() for p in model.parameters()]

    assert all(torch.allclose(a, b, rtol=1e-5, atol=1e-7) for a, b in zip(run(True), run(False)))


def test_each_loss_id_has_its_own_scale():
    generator, critic = make_model(), make_model(1)
    g_opt, c_opt = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (generator, critic))
    [generator, critic], [g_opt, c_opt] = amp.initialize([generator, critic], [g_opt, c_opt], opt_level="O1",
                                                         num_losses=2, verbosity=0)
    x = torch.randn(4, 8)
    with amp.scale_loss(critic(x).sum() * float("inf"), c_opt, loss_id=1) as scaled:
        scaled.backward()
    c_opt.step()
    with amp.scale_loss(generator(x).sum(), g_opt, loss_id=0) as scaled:
        scaled.backward()
    g_opt.step()
    assert [entry["loss_scale"] for entry in amp.state_dict().values()] == [2.0**16, 2.0**15]
