"""`analyze --mode third-party`: where a library hard-codes CUDA, so that a user knows what neither
`torchport migrate` (which rewrites only the source it is given) nor `torchport run` (which patches
torch's Python API at run time) can reach.

The counterpart of Ascend's `pytorch_analyse.sh -m third_party`, whose `full_unsupported_results.csv`
has the columns `File,3rd-party API,Message`. There the middle column names the library's function;
here it names the CUDA API found (`.cuda()`, `torch.cuda.synchronize`, `CUDAExtension`), and the
message names the library's function that holds it, then what that means under migrate and run.

Read with `ast`, not LibCST: a library such as torch has thousands of files and only lines are
wanted, not a rewrite. A file is parsed only if its text mentions CUDA at all (`_MENTIONS`), and a
file that does not parse is skipped and counted (`LibraryScan.unparseable`), never fatal.
Nothing here imports the library scanned.
"""

from torchport.analyze.third_party.cuda_uses import (
    BACKEND_FLAG,
    BUILD_EXTENSION,
    BUILD_TEST,
    COMPILED_CUDA,
    CPP_EXTENSION,
    CUDA_API,
    CUDA_API_HONEST,
    CUDA_API_UNPATCHED,
    CUDA_EXTENSION,
    CUDA_LIBRARY,
    DEVICE,
    KERNEL_SOURCE,
    NCCL_BACKEND,
    NCCL_NAME,
)
from torchport.analyze.third_party.finding import HEADER, LibraryScan, ThirdPartyFinding, write_third_party_csv
from torchport.analyze.third_party.locate import imported_folders, locate_package
from torchport.analyze.third_party.scan import scan_library, survey_library

__all__ = [
    "BACKEND_FLAG", "BUILD_EXTENSION", "BUILD_TEST", "COMPILED_CUDA", "CPP_EXTENSION", "CUDA_API",
    "CUDA_API_HONEST", "CUDA_API_UNPATCHED", "CUDA_EXTENSION", "CUDA_LIBRARY", "DEVICE", "HEADER",
    "KERNEL_SOURCE", "LibraryScan", "NCCL_BACKEND", "NCCL_NAME", "ThirdPartyFinding", "imported_folders",
    "locate_package", "scan_library", "survey_library", "write_third_party_csv",
]
