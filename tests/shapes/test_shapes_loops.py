"""Finding the training loop in source, and the in-place copy that wraps it (no torch needed)."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest

from torchport.shapes import find_training_loops, instrument_source
from torchport.shapes.loops import why_no_training_loop


def _wrap(source: str) -> str | None:
    out = instrument_source(textwrap.dedent(source).encode(), "train.py")
    return None if out is None else out.decode()


def _wrapped_lines(source: str) -> list[int]:
    """The lines whose `for` now iterates DETECTOR.start(...)."""
    out = _wrap(source)
    assert out is not None
    tree = ast.parse(out)
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.For)
            and "DETECTOR.start(" in ast.unparse(node.iter)]


def test_a_plain_loop_is_wrapped_and_detector_imported_on_the_first_import_line():
    out = _wrap("""\
        import torch
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
        """)
    assert out.splitlines()[:2] == ["from torchport.shapes import DETECTOR; import torch",
                                    "for x, y in DETECTOR.start(loader):"]


def test_an_enumerate_loop_inside_an_epoch_loop_is_the_one_wrapped():
    source = """\
        import torch
        for epoch in range(3):
            for i, (x, y) in enumerate(loader):
                opt.zero_grad()
                model(x).sum().backward()
                opt.step()
            scheduler.step()
            for x in val_loader:
                model(x)
        """
    assert _wrapped_lines(source) == [3]
    assert "for i, (x, y) in DETECTOR.start(enumerate(loader)):" in _wrap(source)


def test_a_tqdm_loop_whose_step_is_in_a_called_function():
    source = """\
        import torch
        from tqdm import tqdm
        def train(model, loader):
            pbar = tqdm(loader)
            for batch in pbar:
                step(model, batch)
        def step(model, batch):
            scaler.scale(model(batch)).backward()
            scaler.step(optimizer)
        """
    assert _wrapped_lines(source) == [5]


def test_the_loop_of_train_one_epoch_is_found_from_the_epoch_loop_that_calls_it():
    source = """\
        import torch
        class Trainer:
            def train_one_epoch(self, loader):
                for x, y in loader:
                    self.optimizer.zero_grad()
                    self.criterion(self.model(x), y).backward()
                    self.optimizer.step()
            def fit(self, epochs):
                for epoch in range(epochs):
                    self.train_one_epoch(self.loader)
        """
    loops = find_training_loops(textwrap.dedent(source).encode(), "train.py")
    assert [(loop.line, loop.header) for loop in loops] == [(4, "for x, y in loader:")]
    assert loops[0].reaches == {"backward", "optimizer step"}


def test_a_method_call_is_not_the_files_function_of_that_name():
    """YOLOv5's train.py: its batch loop calls `callbacks.run(...)`, and the file defines its own
    `def run()`, which leads back to `train()`: read as a call of it, the batch loop seemed to
    repeat itself, and no loop was found."""
    source = """\
        import torch
        def train(model, loader, callbacks, optimizer):
            for epoch in range(3):
                for i, (x, y) in enumerate(loader):
                    callbacks.run("on_train_batch_start")
                    model(x).sum().backward()
                    optimizer.step()
                callbacks.run("on_train_epoch_end")
        def main(opt):
            train(opt.model, opt.loader, opt.callbacks, opt.optimizer)
        def run(**kwargs):
            main(kwargs)
        """
    loops = find_training_loops(textwrap.dedent(source).encode(), "train.py")
    assert [loop.line for loop in loops] == [4]


def test_a_loop_that_leads_back_to_itself_through_a_call_is_still_found():
    source = """\
        import torch
        def train(loader, optimizer):
            for x in loader:
                loss(x).backward()
                optimizer.step()
                maybe_restart(loader, optimizer)
        def maybe_restart(loader, optimizer):
            train(loader, optimizer)
        """
    assert _wrapped_lines(source) == [3]


def test_a_gradient_accumulation_loop_stays_inside_the_batch_loop():
    source = """\
        import torch
        for batch in loader:
            for micro in batch.split(2):
                model(micro).sum().backward()
            optimizer.step()
        """
    assert _wrapped_lines(source) == [2]


def test_no_training_loop_gives_none():
    assert _wrap("import torch\nfor x in loader:\n    model(x)\n") is None
    assert _wrap("import torch\nfor e in range(3):\n    scheduler.step()\n") is None  # not an optimizer


def test_a_loop_already_wrapped_by_hand_is_left_as_it_is():
    source = b"from torchport.shapes import DETECTOR\nfor b in DETECTOR.start(loader):\n    b.backward()\n"
    assert instrument_source(source, "train.py") == source
    assert find_training_loops(source)[0].wrapped


def test_every_line_stays_where_it_was():
    source = textwrap.dedent('''\
        """A script."""
        from __future__ import annotations
        import torch  # a comment stays
        def main():
            for x in (
                loader
            ):
                x.backward()
        ''').encode()
    out = instrument_source(source, "train.py").decode()
    assert len(out.splitlines()) == len(source.splitlines())
    assert out.splitlines()[2] == "from torchport.shapes import DETECTOR; import torch  # a comment stays"
    assert out.splitlines()[5] == "        DETECTOR.start(loader)"
    compile(out, "train.py", "exec")


def test_a_bare_tuple_iterable_and_a_file_without_imports():
    out = _wrap("x = 1\nfor a in b, c:\n    a.backward()\n")
    assert out.splitlines()[1] == ('for a in __import__("torchport.shapes", fromlist=["DETECTOR"])'
                                   '.DETECTOR.start((b, c)):')
    compile(out, "train.py", "exec")


def test_the_encoding_and_line_endings_are_kept():
    source = "# -*- coding: latin-1 -*-\r\nimport torch\r\ns = 'é'\r\nfor x in é_loader():\r\n    x.backward()\r\n"
    out = instrument_source(source.encode("latin-1"), "train.py")
    want = source.replace("import torch", "from torchport.shapes import DETECTOR; import torch")
    assert out.decode("latin-1") == want.replace("in é_loader()", "in DETECTOR.start(é_loader())")


def test_source_that_does_not_parse_raises_syntax_error():
    with pytest.raises(SyntaxError):
        instrument_source(b"for x in :\n", "train.py")


def test_instrumenting_imports_no_torch():
    code = ("import sys; from torchport.shapes import instrument_source;"
            "assert instrument_source(b'import torch\\nfor x in l:\\n    x.backward()\\n', 't.py');"
            "assert 'torch' not in sys.modules, 'torch imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_why_no_loop_names_the_training_calls_outside_any_for_loop():
    source = "import torch\nwhile True:\n    loss.backward()\n    optimizer.step()\n"
    assert why_no_training_loop(source, "train.py") == (
        "it calls .backward() and an optimizer's .step(), but in no for loop: in a while loop, or in a "
        "function no for loop of the file calls")
    assert why_no_training_loop("import torch\nnet = torch.nn.Linear(2, 2)\n", "model.py") is None
    assert why_no_training_loop("for x in xs:\n    loss(x).backward()\n", "train.py") is None
