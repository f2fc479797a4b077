"""The cases of Ascend's own rule tests for its migration tool (msFmkTransplt / GPU2Ascend,
`test/msFmkTransplt/testCases/test_rules.py` in the MindStudio training tools), outside its
multi-card and ModelArts modes, written as the CUDA code each case stands for and migrated to npu.

Many of Ascend's cases exercise a rule class with placeholder names (`old_name` -> `new_name`,
`"old_str"`); here each becomes the CUDA pattern that rule exists for (`x.cuda()`, a module held
in a name, a `"cuda"` string). The expected output is judged by meaning on an NPU with torch_npu:
equal to GPU2Ascend's, or better where noted.
"""

import pytest

from torchport import targets
from torchport.migrate import migrate_source

SETUP = "import torch_npu\n"

CASES = {
    # torch.load's map_location (ArgsModifyRule on torch.load)
    # (better, TP023: a load without a location gets the NPU's; left as is, a checkpoint saved on
    # a GPU restores its storages on CUDA, and fails)
    "load without map_location": ("import torch\ntorch.load('m.pt')\n",
                                  "import torch\nimport torch_npu\ntorch.load('m.pt', map_location='npu')\n"),
    "load with a pickle module": ("import torch\ntorch.load('m.pt', pickle_module=p)\n",
                                  "import torch\nimport torch_npu\ntorch.load('m.pt', map_location='npu', pickle_module=p)\n"),
    "load with other keywords": ("import torch\ntorch.load('m.pt', pickle_module=p, weights_only=w)\n",
                                 "import torch\nimport torch_npu\n"
                                 "torch.load('m.pt', map_location='npu', pickle_module=p, weights_only=w)\n"),
    "load onto cuda:0": ("import torch\ntorch.load('m.pt', map_location='cuda:0')\n",
                         "import torch\nimport torch_npu\ntorch.load('m.pt', map_location='npu:0')\n"),
    "load onto cuda:0 after a keyword": ("import torch\ntorch.load('m.pt', pickle_module=p, map_location='cuda:0')\n",
                                         "import torch\nimport torch_npu\ntorch.load('m.pt', pickle_module=p, map_location='npu:0')\n"),
    "load onto the cpu": ("import torch\ntorch.load('m.pt', map_location='cpu')\n",
                          "import torch\ntorch.load('m.pt', map_location='cpu')\n"),
    # a "cuda" device passed on (GPU2Ascend: only to the functions its rule names; here to any)
    "a device argument": ("import torch\nbuild('cuda', args)\n", "import torch\nimport torch_npu\nbuild('npu', args)\n"),
    # torch's experimental_config is not torch_npu's profiler's (better: the trailing comma goes too)
    "profile with experimental_config": (
        "import torch\ntorch.profiler.profile(with_flops=False, with_modules=False, experimental_config=config)\n",
        "import torch\nimport torch_npu\nimport torch_npu.profiler\n"
        "torch_npu.profiler.profile(with_flops=False, with_modules=False)\n"),
    "profile without it": ("import torch\ntorch.profiler.profile(with_flops=False)\n",
                           "import torch\nimport torch_npu\nimport torch_npu.profiler\ntorch_npu.profiler.profile(with_flops=False)\n"),
    "ProfilerAction": ("import torch\naction = torch.profiler.ProfilerAction.RECORD\n",
                       "import torch\nimport torch_npu\nimport torch_npu.profiler\naction = torch_npu.profiler.ProfilerAction.RECORD\n"),
    # a device held in a name (GPU2Ascend wraps it in `f'npu:{d}' if isinstance(d, int) else d`;
    # since torch 2.5 an int device is the current accelerator's: the call is right as it is)
    "to a device in a name": ("import torch\na.to(d)\n", "import torch\na.to(d)\n"),
    "to another tensor's device": ("import torch\nnew_order.to(src_tokens.device)\n", "import torch\nnew_order.to(src_tokens.device)\n"),
    # torch.npu used before torch_npu is imported (InsertAheadRule)
    "torch.npu imported first": ("import torch.npu\nfrom torch.npu import amp\n", "import torch_npu\nimport torch.npu\nfrom torch.npu import amp\n"),
    "torch.npu after another import": ("import os\nfrom torch.npu import amp\n", "import os\nimport torch_npu\nfrom torch.npu import amp\n"),
    "no torch.npu": ("import os\nimport sys\n", "import os\nimport sys\n"),
    # .cuda() wherever it is called (FuncNameModifyRule "cuda" -> "npu")
    "a method": ("x = model.cuda()\n", SETUP + "\nx = model.npu()\n"),
    "a method of an attribute": ("x = self.net.cuda()\n", SETUP + "\nx = self.net.npu()\n"),
    "a method inside an argument": ("y = a.cuda.b(x.cuda())\n", SETUP + "\ny = a.cuda.b(x.npu())\n"),
    "a method of a call's result": ("y = (a == b).long().cuda()\n", SETUP + "\ny = (a == b).long().npu()\n"),
    "a method through a conditional": ("y = (x.cuda if use_gpu else x.cpu)()\n", SETUP + "\ny = (x.npu if use_gpu else x.cpu)()\n"),
    "a method through nested conditionals": ("y = (x.cuda if a else x.cpu if b else x.cuda)()\n",
                                             SETUP + "\ny = (x.npu if a else x.cpu if b else x.npu)()\n"),
    "a method in the condition too": ("y = (x.cuda if x.cuda().is_leaf else x.cpu)()\n",
                                      SETUP + "\ny = (x.npu if x.npu().is_leaf else x.cpu)()\n"),
    "assigned one by one": ("student = student.cuda()\nteacher = teacher.cuda()\n",
                            SETUP + "\nstudent = student.npu()\nteacher = teacher.npu()\n"),
    "assigned together": ("student, teacher = student.cuda(), teacher.cuda()\n",
                          SETUP + "\nstudent, teacher = student.npu(), teacher.npu()\n"),
    # torch.cuda however it is reached (FuncNameModifyRule with a dotted name, ModuleNameModifyRule)
    "torch.cuda spelled out": ("import torch\ntorch.cuda.synchronize()\n", "import torch\nimport torch_npu\ntorch.npu.synchronize()\n"),
    "torch.cuda imported under a name": ("import torch.cuda as CD\nCD.synchronize()\n",
                                         "import torch\nimport torch_npu\n\ntorch.npu.synchronize()\n"),
    "torch.cuda held in a name": ("import torch\nCD = torch.cuda\nCD.synchronize()\n",
                                  "import torch\nimport torch_npu\nCD = torch.npu\ntorch.npu.synchronize()\n"),
    "torch.cuda through conditionals": ("import torch\n(torch.cuda if a else torch.cuda if b else torch.cuda).synchronize()\n",
                                        "import torch\nimport torch_npu\n(torch.npu if a else torch.npu if b else torch.npu).synchronize()\n"),
    "cuda imported from torch": ("from torch import cuda\n(cuda if a else cuda).synchronize()\n",
                                 "import torch\nimport torch_npu\n\n(torch.npu if a else torch.npu).synchronize()\n"),
    "a submodule imported": ("import torch.cuda.amp\nscaler = torch.cuda.amp.GradScaler()\n",  # (it binds `torch`: kept)
                             "import torch.cuda.amp\nimport torch_npu\nscaler = torch.npu.amp.GradScaler()\n"),
    "a submodule under a name": ("import torch.cuda.amp as amp\nscaler = amp.GradScaler()\n",
                                 "import torch\nimport torch_npu\n\nscaler = torch.npu.amp.GradScaler()\n"),
    "a submodule from its package": ("import torch.cuda as C\nscaler = C.amp.GradScaler()\n",
                                     "import torch\nimport torch_npu\n\nscaler = torch.npu.amp.GradScaler()\n"),
    "a name that only looks like it": ("cuda.amp.run()\nother.cuda.amp.run()\n", "cuda.amp.run()\nother.cuda.amp.run()\n"),
    # "cuda" in strings (ReplaceStringRule, strict: code only)
    "strings that name the device": ("import torch\nA = 'cuda'\nB = \"cuda\"\nbuild(device='cuda')\n",
                                     "import torch\nimport torch_npu\nA = 'npu'\nB = \"npu\"\nbuild(device='npu')\n"),
    "a comment and a docstring": ("import torch\n\"\"\"Trains on cuda.\"\"\"\n# runs on cuda\n",
                                  "import torch\n\"\"\"Trains on cuda.\"\"\"\n# runs on cuda\n"),
    "a device built at run time": ("import torch\nd = 'cuda:%d' % i\ne = f'cuda:{i}'\n",
                                   "import torch\nimport torch_npu\nd = 'npu:%d' % i\ne = f'npu:{i}'\n"),
    # a DDP-wrapped model's .module (PythonVersionConvertRule turns it into `.modules`, a method:
    # hasattr(model.modules, ...) is then always False; left as it is here)
    "hasattr of .module": ("hasattr(model.module, 'optimizer')\n", "hasattr(model.module, 'optimizer')\n"),
}


@pytest.mark.parametrize("name", CASES)
def test_the_npu_output_means_what_gpu2ascend_means_or_better(name):
    source, expected = CASES[name]
    result = migrate_source(source.encode(), targets.get("npu"), "case.py")
    assert result.error is None
    assert result.source.decode() == expected
    assert not [f for f in result.findings if f.operation.value == "UNSUPPORTED"]
