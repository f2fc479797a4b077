"""The rewrite rules, one class each, run together in one pass over a file (see base.py)."""

from torchport.migrate.rules.advice import (
    BroadcastBuffersAdvice,
    DataParallelAdvice,
    Float64Advice,
    LaunchEnvironmentAdvice,
    MixedPrecisionAdvice,
    NonBlockingAdvice,
    SpawnAdvice,
)
from torchport.migrate.rules.affinity import (
    AttentionAffinity,
    ClipGradAffinity,
    GeluTanhAffinity,
    OptimizerAffinity,
    RmsNormAffinity,
    RotaryEmbeddingAffinity,
    SwigluAffinity,
)
from torchport.migrate.rules.amp import AmpRule
from torchport.migrate.rules.async_keyword import AsyncKeywordRule
from torchport.migrate.rules.checkpoint import CheckpointLocationRule
from torchport.migrate.rules.cuda_api import CudaApiRule
from torchport.migrate.rules.cuda_build import CudaBuildVersionRule
from torchport.migrate.rules.cuda_method import CudaMethodRule
from torchport.migrate.rules.device_comparisons import DeviceComparisonRule
from torchport.migrate.rules.device_ints import DeviceIndexRule
from torchport.migrate.rules.device_literals import DeviceLiteralRule
from torchport.migrate.rules.distributed import DdpDeviceIdsRule, DistributedBackendRule
from torchport.migrate.rules.environment import CudnnFlagRule, VisibleDevicesRule
from torchport.migrate.rules.gpu_hint import UnusedGpuHintRule
from torchport.migrate.rules.host_timing import HostTimingRule
from torchport.migrate.rules.is_available import CpuFallbackRule
from torchport.migrate.rules.is_cuda import IsCudaRule
from torchport.migrate.rules.legacy_types import LegacyTypeUseRule
from torchport.migrate.rules.pin_memory import PinMemoryRule
from torchport.migrate.rules.profiler import ProfilerActivityRule, ProfilerModuleRule
from torchport.migrate.rules.record_stream import RecordStreamRule
from torchport.migrate.rules.setup_import import SetupImportRule
from torchport.migrate.rules.sync_batchnorm import SyncBatchNormRule

RULES = [
    AsyncKeywordRule,  # (on the tokens, before the parse)
    DeviceLiteralRule,
    DeviceComparisonRule,
    DeviceIndexRule,
    CudaMethodRule,
    CheckpointLocationRule,
    CudaApiRule,
    LegacyTypeUseRule,
    AmpRule,
    DistributedBackendRule,
    DdpDeviceIdsRule,
    VisibleDevicesRule,
    CudnnFlagRule,
    HostTimingRule,
    CpuFallbackRule,
    IsCudaRule,
    RecordStreamRule,
    SyncBatchNormRule,
    PinMemoryRule,
    ProfilerActivityRule,
    ProfilerModuleRule,
    CudaBuildVersionRule,
    UnusedGpuHintRule,
    SetupImportRule,
    # advice: rows only, nothing changed (the optimizer swap only with --apply-affinity)
    MixedPrecisionAdvice,
    Float64Advice,
    DataParallelAdvice,
    SpawnAdvice,
    BroadcastBuffersAdvice,
    NonBlockingAdvice,
    LaunchEnvironmentAdvice,
    OptimizerAffinity,
    ClipGradAffinity,
    AttentionAffinity,
    RmsNormAffinity,
    RotaryEmbeddingAffinity,
    SwigluAffinity,
    GeluTanhAffinity,
]
