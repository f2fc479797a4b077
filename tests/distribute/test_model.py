"""model.wrap_model: the model in DistributedDataParallel once it is on its device."""

import pytest

from torchport.distribute.detect import Plan
from torchport.distribute.model import wrap_model

from _distribute_steps import messages, run

WRAP = "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[LOCAL_RANK], broadcast_buffers=False)\n"
OPTIMIZER = "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"


def test_the_model_an_optimizer_trains_is_wrapped_after_its_move_and_before_the_optimizer():
    source = "import torch\nmodel = Net()\nmodel = model.to(device)\n" + OPTIMIZER + "for x in data:\n    model(x)\n"
    text, rows = run(wrap_model, source)
    assert text == "import torch\nmodel = Net()\nmodel = model.to(device)\n" + WRAP + OPTIMIZER + "for x in data:\n    model(x)\n"
    assert rows == [(3, "TP203", "INSERT")]


def test_in_a_function_the_wrap_goes_in_that_function_before_the_loop():
    source = ("import torch\nfrom torch import optim\ndef main():\n    net = Net().cuda()\n"
              "    opt = optim.Adam(net.parameters())\n    for epoch in range(3):\n        train(net, opt)\n")
    text, _ = run(wrap_model, source)
    assert ("    net = Net().cuda()\n    net = torch.nn.parallel.DistributedDataParallel(net, device_ids=[LOCAL_RANK], "
            "broadcast_buffers=False)\n    opt = optim.Adam") in text


def test_a_move_after_the_optimizer_but_before_training_still_comes_first():
    source = "import torch\nmodel = Net()\n" + OPTIMIZER + "model.cuda()\ntrain(model)\n"
    text, _ = run(wrap_model, source)
    assert "model.cuda()\n" + WRAP + "train(model)\n" in text


def test_apex_and_sync_batchnorm_come_before_the_wrap():
    source = ("import torch\nfrom apex import amp\nmodel = Net()\nmodel = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n"
              "model = model.cuda()\n" + OPTIMIZER + "model, optimizer = amp.initialize(model, optimizer)\ntrain(model)\n")
    text, _ = run(wrap_model, source)
    assert "model, optimizer = amp.initialize(model, optimizer)\n" + WRAP + "train(model)\n" in text


@pytest.mark.parametrize(("dp", "kept"), [
    pytest.param("model = nn.DataParallel(model)\n", "", id="assigned to itself"),
    pytest.param("model = torch.nn.DataParallel(model, device_ids=[0, 1])\n", "", id="with its devices"),
    pytest.param("if torch.cuda.device_count() > 1:\n    model = nn.DataParallel(model)\n", "", id="under a device count"),
    pytest.param("model = nn.DataParallel(model).cuda()\n", "model = model.cuda()\n", id="moved after"),
])
def test_data_parallel_goes_and_the_wrap_follows_the_device_move(dp, kept):
    source = "import torch\nimport torch.nn as nn\nmodel = Net()\n" + dp + "model.to(device)\n" + OPTIMIZER
    text, rows = run(wrap_model, source)
    assert "DataParallel(model" not in text.replace("DistributedDataParallel(model", "")
    assert text == "import torch\nimport torch.nn as nn\nmodel = Net()\n" + kept + "model.to(device)\n" + WRAP + OPTIMIZER
    assert rows[0][1:] in (("TP203", "DELETE"), ("TP203", "MODIFY"))


def test_a_model_found_only_by_its_data_parallel_is_wrapped():
    source = "import torch\nnet = torch.nn.DataParallel(Net()).cuda()\nfor x in data:\n    net(x)\n"
    text, _ = run(wrap_model, source)
    assert text == ("import torch\nnet = Net().cuda()\nnet = torch.nn.parallel.DistributedDataParallel(net, "
                    "device_ids=[LOCAL_RANK], broadcast_buffers=False)\nfor x in data:\n    net(x)\n")


def test_after_the_wrap_the_models_own_state_and_methods_are_read_through_module():
    source = ("import torch\nmodel = Net().cuda()\n" + OPTIMIZER + "train(model)\ntorch.save(model.state_dict(), p)\n"
              "model.load_state_dict(sd)\nmodel.eval()\nz = model.encode(x)\nw = model.module.fc\n")
    text, _ = run(wrap_model, source)
    tail = text.split("train(model)\n")[1]
    assert tail == ("torch.save(model.module.state_dict(), p)\nmodel.module.load_state_dict(sd)\nmodel.eval()\n"
                    "z = model.module.encode(x)\nw = model.module.fc\n")


def test_an_isinstance_test_of_data_parallel_also_accepts_ddp():
    source = ("import torch\nimport torch.nn as nn\nmodel = Net().cuda()\n" + OPTIMIZER
              + "m = model.module if isinstance(model, nn.DataParallel) else model\n")
    text, _ = run(wrap_model, source)
    assert "isinstance(model, (nn.DataParallel, torch.nn.parallel.DistributedDataParallel))" in text


def test_the_functional_data_parallel_of_the_model_becomes_a_call_of_the_wrapper():
    source = ("import torch\nmodel = Net().cuda()\n" + OPTIMIZER + "for x in data:\n"
              "    y = torch.nn.parallel.data_parallel(model, x, device_ids=[0, 1])\n"
              "    z = torch.nn.parallel.data_parallel(model, (x, m))\n"
              "    w = torch.nn.parallel.data_parallel(other, x)\n")
    text, rows = run(wrap_model, source)
    assert "    y = model(x)\n    z = model(x, m)\n    w = torch.nn.parallel.data_parallel(other, x)\n" in text
    assert (7, "TP203", "NOTE") in rows


@pytest.mark.parametrize(("layer", "says"), [
    ("nn.BatchNorm2d(8)", "BatchNorm2d"),
    ("self.register_buffer('mask', m)", "register_buffer"),
])
def test_buffers_stay_broadcast_where_the_file_shows_some_to_share(layer, says):
    source = (f"import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        x = {layer}\n"
              "model = Net().cuda()\n" + OPTIMIZER)
    text, _ = run(wrap_model, source)
    assert "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[LOCAL_RANK])\n" in text
    assert any(says in m for m in messages(wrap_model, source))


@pytest.mark.parametrize("made", ["torchvision.models.resnet18(weights=None)", "timm.create_model('resnet50')"])
def test_buffers_stay_broadcast_where_a_model_library_makes_what_the_file_cannot_see(made):
    """(pytorch/examples' siamese_network: a torchvision ResNet's BatchNorm statistics parted
    across ranks under broadcast_buffers=False)"""
    library = made.split(".")[0]
    source = (f"import torch\nimport {library}\nclass Net(torch.nn.Module):\n    def __init__(self):\n"
              f"        self.backbone = {made}\nmodel = Net().cuda()\n" + OPTIMIZER)
    text, _ = run(wrap_model, source)
    assert "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[LOCAL_RANK])\n" in text
    assert any("cannot see into" in m for m in messages(wrap_model, source))


def test_batchnorm_made_sync_needs_no_broadcast():
    source = ("import torch\nimport torch.nn as nn\nlayer = nn.BatchNorm2d(8)\nmodel = Net()\n"
              "model = nn.SyncBatchNorm.convert_sync_batchnorm(model).cuda()\n" + OPTIMIZER)
    assert WRAP in run(wrap_model, source)[0]


def test_a_model_this_file_never_moves_is_moved_to_its_device_by_the_wrap():
    """(SimCLR: run.py makes the model and builds its optimizer; the trainer class it is handed to
    moves it, after the wrap's place, which DDP could not follow.)"""
    source = "import torch\nmodel = Net()\n" + OPTIMIZER + "trainer = Trainer(model=model)\n"
    text, rows = run(wrap_model, source)
    assert text == ("import torch\nmodel = Net()\nmodel = torch.nn.parallel.DistributedDataParallel(model.cuda(), "
                    "device_ids=[LOCAL_RANK], broadcast_buffers=False)\n" + OPTIMIZER + "trainer = Trainer(model=model)\n")
    assert rows == [(2, "TP203", "INSERT")]


def test_a_model_used_as_a_container_is_not_wrapped_and_no_loader_is_sharded():
    from torchport.distribute import Options, distribute_source
    source = ("import torch\nlayers = torch.nn.ModuleList([Net()]).cuda()\n"
              "optimizer = torch.optim.SGD(layers.parameters(), lr=0.1)\n"
              "train_loader = torch.utils.data.DataLoader(train_set, batch_size=64, shuffle=True)\n"
              "for epoch in range(3):\n    for x in train_loader:\n        for layer in layers:\n            x = layer(x)\n"
              "        x.sum().backward()\n        optimizer.step()\n")
    done = distribute_source(source, "train.py", Options(entry=True))
    assert "DistributedDataParallel" not in done.source and "DistributedSampler" not in done.source
    assert "// WORLD_SIZE" not in done.source
    rows = [(f.code, f.message) for f in done.findings]
    assert any(code == "TP202" and "N processes would train N models apart" in m and "layers could not be wrapped" in m
               for code, m in rows)


def test_a_model_held_in_an_attribute_is_not_wrapped_and_no_loader_is_sharded():
    from torchport.distribute import Options, distribute_source
    source = ("import torch\nclass Trainer:\n    def __init__(self):\n        self.model = Net().cuda()\n"
              "        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)\n"
              "    def fit(self, loader):\n        for x in loader:\n            self.model(x).sum().backward()\n"
              "            self.opt.step()\n"
              "train_loader = torch.utils.data.DataLoader(train_set, batch_size=64, shuffle=True)\n"
              "if __name__ == '__main__':\n    Trainer().fit(train_loader)\n")
    done = distribute_source(source, "train.py", Options(entry=True))
    assert "DistributedSampler" not in done.source and "// WORLD_SIZE" not in done.source
    rows = [(f.code, f.operation.value, f.message) for f in done.findings]
    assert any(code == "TP203" and "self.model is held in an attribute" in m for code, _, m in rows)
    assert any(code == "TP202" and "self.model, held in an attribute" in m for code, _, m in rows)


def test_a_file_without_a_model_gets_one_row():
    source = "import torch\nx = torch.ones(2).cuda()\n"
    assert run(wrap_model, source) == (source, [(1, "TP203", "NOTE")])


def test_a_file_distributed_already_is_not_wrapped_again():
    source = "import torch\nmodel = Net().cuda()\n" + OPTIMIZER
    assert run(wrap_model, source, Plan(entry=True, already="x", spawns=True)) == (source, [])


def test_a_data_parallel_of_another_functions_model_is_kept_with_a_row():
    source = ("import torch\nimport torch.nn as nn\nmodel = Net().cuda()\n" + OPTIMIZER
              + "def other(device):\n    m = nn.DataParallel(Net()).to(device)\n    return m\n")
    text, rows = run(wrap_model, source)
    assert "    m = nn.DataParallel(Net()).to(device)\n" in text and WRAP in text
    assert (6, "TP203", "NOTE") in rows


# A trainer in the style of the CIFAR wide-resnet scripts: a test-only path and the training path
# each put the global `net` in a one-device DataParallel under `if use_cuda:`; the optimizer is
# built inside `train()`, over the global.
GLOBAL_NET = (
    "import sys\nimport torch\nuse_cuda = torch.cuda.is_available()\n"
    "if args.testOnly:\n    net = torch.load('ckpt')['net']\n    if use_cuda:\n        net.cuda()\n"
    "        net = torch.nn.DataParallel(net, device_ids=range(torch.cuda.device_count()))\n"
    "    net.eval()\n    sys.exit(0)\n"
    "net = Net()\nif use_cuda:\n    net.cuda()\n    net = torch.nn.DataParallel(net, device_ids=range(torch.cuda.device_count()))\n"
    "def train(epoch):\n    net.train()\n    net.training = True\n"
    "    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)\n    for x in data:\n        optimizer.step()\n"
    "def test(epoch):\n    net.training = False\n"
    "for epoch in range(3):\n    train(epoch)\n    test(epoch)\n")


def test_a_global_model_an_optimizer_in_a_function_trains_is_wrapped_where_the_training_path_makes_it():
    text, rows = run(wrap_model, GLOBAL_NET)
    wrap = "net = torch.nn.parallel.DistributedDataParallel(net, broadcast_buffers=False)\n"
    assert text.count("DistributedDataParallel(") == 1
    # after the training path's `if use_cuda:` block, before train() is defined: not in the test-only path
    assert "net = Net()\nif use_cuda:\n    net.cuda()\n" + wrap + "def train(epoch)" in text
    assert (14, "TP203", "INSERT") in rows


def test_a_model_moved_only_under_a_condition_is_wrapped_without_device_ids():
    """device_ids on a module left on the CPU raises ValueError: DDP takes the module's device."""
    source = "import torch\nmodel = Net()\nif use_cuda:\n    model = model.cuda()\n" + OPTIMIZER + "train(model)\n"
    text, _ = run(wrap_model, source)
    assert "    model = model.cuda()\nmodel = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)\n" in text
    ns = {"torch": __import__("torch")}
    # the wrapped call is valid for a CPU module on a one-process gloo group
    import torch.distributed as dist
    if not dist.is_initialized():
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        ns.update(model=torch_linear(), LOCAL_RANK=0)
        exec("model = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)", ns)
        assert isinstance(ns["model"], torch_ddp())
    finally:
        dist.destroy_process_group()


def test_a_model_moved_by_a_statement_of_its_block_keeps_device_ids():
    source = "import torch\nmodel = Net()\nif use_cuda:\n    print(1)\nmodel = model.cuda()\n" + OPTIMIZER + "train(model)\n"
    text, _ = run(wrap_model, source)
    assert "model = model.cuda()\n" + WRAP in text


def torch_linear():
    import torch
    return torch.nn.Linear(2, 2)


def torch_ddp():
    import torch
    return torch.nn.parallel.DistributedDataParallel


def test_every_model_an_optimizer_trains_is_wrapped():
    """A GAN: the generator left unwrapped would train apart on each process."""
    source = ("import torch\nnetG = G().cuda()\nnetD = D().cuda()\n"
              "optD = torch.optim.Adam(netD.parameters())\noptG = torch.optim.Adam(netG.parameters())\n"
              "for x in data:\n    netD(netG(x)).sum().backward()\n    optD.step()\n    optG.step()\n")
    text, rows = run(wrap_model, source)
    assert "netG = G().cuda()\nnetG = torch.nn.parallel.DistributedDataParallel(netG, device_ids=[LOCAL_RANK], " in text
    assert "netD = D().cuda()\nnetD = torch.nn.parallel.DistributedDataParallel(netD, device_ids=[LOCAL_RANK], " in text
    assert sorted(r for r in rows if r[2] == "INSERT") == [(2, "TP203", "INSERT"), (3, "TP203", "INSERT")]
    compile(text, "gan.py", "exec")


def test_the_wrap_follows_the_models_own_initialisation_in_place():
    """DDP broadcasts rank 0's weights when it wraps: a `model.apply(weights_init)` after the wrap
    would leave each process with its own random weights (DCGAN)."""
    source = ("import torch\nnetG = G().cuda()\nnetG.apply(weights_init)\nif opt.netG != '':\n"
              "    netG.load_state_dict(torch.load(opt.netG))\nprint(netG)\n"
              "optG = torch.optim.Adam(netG.parameters())\nfor x in data:\n    netG(x).sum().backward()\n")
    text, _ = run(wrap_model, source)
    assert ("netG.apply(weights_init)\n"
            "netG = torch.nn.parallel.DistributedDataParallel(netG, device_ids=[LOCAL_RANK]") in text
    assert "netG.module.load_state_dict" in text  # (a checkpoint, the same on every process, after the wrap)
