"""Type stubs for gpreempt (the pybind11 extension plus its Python helpers)."""
from types import TracebackType
from typing import List, Optional, Sequence, Tuple, Type

__version__: str
GRACE_DEFAULT: int

class Error(OSError):
    """errno: the error code; strerror: the detail message."""

class Queue:
    queue_id: int
    gpu_id: int
    type: int
    ring_size: int
    ring_base_address: int
    read_pointer_address: int
    write_pointer_address: int
    ctx_save_restore_address: int
    ctx_save_restore_size: int
    exception_status: int

class SysfsQueue:
    queue_id: int
    gpu_id: int
    type: int
    ring_size: int

class BatchResult:
    count: int
    queues: List[Tuple[int, str]]
    all_done: bool
    hop_us: float
    ioctl_us: float
    total_us: float

class Suspension:
    target: Target
    ids: Optional[List[int]]
    grace: int
    strict: bool
    result: Optional[BatchResult]
    def __init__(self, target: Target, ids: Optional[Sequence[int]] = ..., grace: int = ...,
                 strict: bool = ...) -> None: ...
    def __enter__(self) -> Suspension: ...
    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool: ...

class Target:
    pid: int
    def queues(self) -> List[Queue]: ...
    def suspend(self, ids: Optional[Sequence[int]] = ..., grace: int = ...) -> BatchResult: ...
    def resume(self, ids: Optional[Sequence[int]] = ...) -> BatchResult: ...
    def suspended(self, ids: Optional[Sequence[int]] = ..., grace: int = ...,
                  strict: bool = ...) -> Suspension: ...
    def detach(self) -> None: ...
    def __enter__(self) -> Target: ...
    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool: ...

class Context:
    def __init__(self, device_path: str = ..., watchdog_ms: int = ...,
                 handle_signals: bool = ...) -> None: ...
    @property
    def kfd_version(self) -> Tuple[int, int]: ...
    def attach(self, pid: int) -> Target: ...
    def stats(self) -> dict: ...
    def take_notices(self) -> List[Tuple[int, str]]: ...
    def close(self) -> None: ...
    def __enter__(self) -> Context: ...
    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool: ...

def find_queues_by_process(pid: int) -> List[SysfsQueue]: ...
def my_queues() -> List[SysfsQueue]: ...
def print_my_queues() -> int: ...
def grace_from_us(us: int, clock_mhz: int) -> int: ...
def gpu_clock_mhz(gpu_id: int) -> int: ...
