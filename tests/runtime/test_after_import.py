"""runtime/after_import.py: a module is patched when the script imports it, once, and the waiting
finder goes with the patches."""

from __future__ import annotations

import sys

from torchport.runtime.after_import import after_import
from torchport.runtime.patchbook import PatchBook


def test_a_module_is_patched_right_after_its_import_and_only_then(tmp_path, monkeypatch):
    (tmp_path / "late_module_for_torchport.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    book = PatchBook()
    after_import("late_module_for_torchport", lambda module: seen.append(module.VALUE), book)
    assert seen == []
    try:
        import late_module_for_torchport  # noqa: F401
        assert seen == [1]
        assert not any(type(f).__name__ == "_Waiting" for f in sys.meta_path)  # (it stepped aside)
    finally:
        sys.modules.pop("late_module_for_torchport", None)
        book.restore_all()


def test_an_imported_module_is_patched_now_and_an_unimported_ones_finder_is_undone(tmp_path):
    seen = []
    book = PatchBook()
    after_import("sys", lambda module: seen.append(module.__name__), book)
    after_import("never_imported_module_for_torchport", seen.append, book)
    assert seen == ["sys"] and any(type(f).__name__ == "_Waiting" for f in sys.meta_path)
    book.restore_all()
    assert not any(type(f).__name__ == "_Waiting" for f in sys.meta_path)
