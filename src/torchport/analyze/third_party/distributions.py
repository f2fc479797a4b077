"""Which distribution to install for an import that is missing: `import cv2` wants
`pip install opencv-python`.

Python knows this only for what is installed (`importlib.metadata.packages_distributions()`);
for an import that is not, only knowledge can answer: `DISTRIBUTIONS`, written by hand. Each row
is a top-level import name and the PyPI project whose wheels install it, as requirements files
spell it (a row is kept only where the project is the one everyone means: `faiss` (faiss-cpu or
faiss-gpu), `pynvml`, `google` and `mmcv` have no row). Names that differ only in case, `-` or
`_` (`pytorch_lightning`) have none either: pip reads them alike. An import without a row is
shown by its name alone, never guessed: `pip install yaml` or `pip install sklearn` would not
give what the code imports.
"""

from __future__ import annotations

import importlib.metadata
from functools import lru_cache

DISTRIBUTIONS = {
    "absl": "absl-py",
    "attr": "attrs",
    "Bio": "biopython",
    "bs4": "beautifulsoup4",
    "cv2": "opencv-python",
    "dateutil": "python-dateutil",
    "docx": "python-docx",
    "dotenv": "python-dotenv",
    "fitz": "PyMuPDF",
    "git": "GitPython",
    "hydra": "hydra-core",
    "jwt": "PyJWT",
    "magic": "python-magic",
    "OpenGL": "PyOpenGL",
    "PIL": "Pillow",
    "serial": "pyserial",
    "skimage": "scikit-image",
    "sklearn": "scikit-learn",
    "skvideo": "scikit-video",
    "websocket": "websocket-client",
    "yaml": "PyYAML",
    "zmq": "pyzmq",
}


def distribution_of(top_level: str) -> str | None:
    """The distribution that installs the top-level module `top_level`: Python's own answer where
    one is installed, else the table's; None where neither knows."""
    installed = _installed().get(top_level)
    if installed:
        return " or ".join(sorted(set(installed)))
    return DISTRIBUTIONS.get(top_level)


@lru_cache(maxsize=1)
def _installed() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()
