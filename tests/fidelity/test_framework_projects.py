"""Pattern projects for the frameworks' settings (#37): a transformers fine-tune asking for flash
attention, a diffusers UNet trainer switching xformers on, a Lightning Fabric loop on "gpu" with
float16 mixed precision. None of them runs on this CPU host as written (flash-attn, xformers and a
GPU are missing). Migrated to cpu and to accelerator each trains, with the losses of the same script
ported by hand (BY_HAND), and so does each, unmodified, under `run --target cpu`; the npu output asks
for what runs there and reports what needs a plugin."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from _processes import execute

pytestmark = pytest.mark.fidelity

HERE = Path(__file__).resolve().parent / "frameworks"
BIN = Path(sys.executable).parent
TORCHPORT = [str(BIN / "torchport")] if (BIN / "torchport").exists() else [sys.executable, "-m", "torchport.cli"]
TIMEOUT_S = 300
LOSS = re.compile(r"^step (\d+) loss (\d+\.\d+)$", re.MULTILINE)

# Each script as a person ports it to the CPU, line by line: what the migrated one must compute.
BY_HAND = {
    "finetune_llama.py": {
        'attn_implementation="flash_attention_2"': 'attn_implementation="sdpa"',
        'model.to("cuda")': 'model.to("cpu")',
        'tokens.to("cuda")': 'tokens.to("cpu")',
    },
    "train_unet.py": {
        "    if args.enable_xformers_memory_efficient_attention:\n"
        "        unet.enable_xformers_memory_efficient_attention()\n": "",
        'unet.to("cuda")': 'unet.to("cpu")',
        'images.to("cuda")': 'images.to("cpu")',
        'generator=generator).to("cuda")\n        timesteps': 'generator=generator).to("cpu")\n        timesteps',
        '(clean.shape[0],), generator=generator).to("cuda")': '(clean.shape[0],), generator=generator).to("cpu")',
    },
    "fabric_train.py": {'Fabric(accelerator="gpu", devices=1, precision="16-mixed")':
                        'Fabric(accelerator="cpu", devices=1, precision="bf16-mixed")'},
}
FAILS_AS_WRITTEN = {"finetune_llama.py": "FlashAttention2", "train_unet.py": "xformers",
                    "fabric_train.py": "No supported gpu backend"}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("TORCHPORT_TARGET", None)
    env.update(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", HF_HUB_OFFLINE="1")
    return env


def _run(script: Path, *before: str) -> subprocess.CompletedProcess:
    return execute([sys.executable, *before, str(script)], script.parent, _env(), TIMEOUT_S)


def _losses(result: subprocess.CompletedProcess) -> list[tuple[str, str]]:
    story = f"{' '.join(map(str, result.args))}\nexit {result.returncode}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    assert result.returncode == 0 and "FINAL" in result.stdout, story
    losses = LOSS.findall(result.stdout)
    assert len(losses) >= 4, story
    return losses


def _migrated(target: str, tmp_path: Path) -> Path:
    out = tmp_path / target
    result = subprocess.run([*TORCHPORT, "migrate", str(HERE), "-o", str(out), "--target", target, "--quiet"],
                            capture_output=True, text=True, env=_env(), timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def by_hand(tmp_path_factory) -> dict[str, list[tuple[str, str]]]:
    folder = tmp_path_factory.mktemp("by_hand")
    losses = {}
    for name, lines in BY_HAND.items():
        text = (HERE / name).read_text()
        for cuda, cpu in lines.items():
            assert text.count(cuda) == 1, cuda
            text = text.replace(cuda, cpu)
        code = text.split('"""', 2)[2]  # (past the docstring, which says what the script was written for)
        assert '"cuda"' not in code and "attention()" not in code and '"gpu"' not in code, name
        (folder / name).write_text(text)
        losses[name] = _losses(_run(folder / name))
    return losses


@pytest.mark.parametrize("name", sorted(BY_HAND))
def test_the_script_as_written_fails_on_this_host(name):
    result = _run(HERE / name)
    assert result.returncode != 0 and FAILS_AS_WRITTEN[name] in result.stderr, result.stderr[-2000:]


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
@pytest.mark.parametrize("name", sorted(BY_HAND))
def test_the_migrated_script_trains_as_the_one_ported_by_hand(name, target, tmp_path, by_hand):
    assert _losses(_run(_migrated(target, tmp_path) / name)) == by_hand[name]


@pytest.mark.parametrize("name", sorted(BY_HAND))
def test_the_script_under_run_trains_as_the_one_ported_by_hand(name, tmp_path, by_hand):
    script = tmp_path / name
    script.write_text((HERE / name).read_text())
    result = _run(script, "-m", "torchport", "run", "--target", "cpu")
    assert _losses(result) == by_hand[name]


def test_the_npu_output_asks_for_what_runs_there_and_reports_lightnings_plugin(tmp_path):
    out = _migrated("npu", tmp_path)
    assert 'attn_implementation="sdpa"' in (out / "finetune_llama.py").read_text()
    assert "unet.enable_xformers_memory_efficient_attention()" not in (out / "train_unet.py").read_text()
    assert 'Fabric(accelerator="npu"' in (out / "fabric_train.py").read_text()
    unsupported = (out / "torchport_report" / "unsupported_api.csv").read_text()
    assert 'Lightning has no ""npu"" accelerator built in' in unsupported
