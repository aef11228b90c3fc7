"""How many CPU cores this process may use, and which CPU they are: every time we record (a
benchmark's, the test suite's) names the machine it was taken on."""

import os
import platform
from pathlib import Path

# The instruction sets our speed depends on: the embedder's matrix kernels (AVX2, AVX-512, its VNNI
# and BF16 forms, AMX's tiles) and llama.cpp's.
SPEED_FLAGS = (
    "avx2",
    "fma",
    "avx512f",
    "avx512_vnni",
    "avx512_bf16",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
)


def available_cores() -> int:
    """The cores this process may run on (a container's or taskset's limit, not the machine's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def cpu_model(cpuinfo: str | None = None) -> str:
    """The CPU's model name as Linux reports it (``/proc/cpuinfo``), else the platform's word for it."""
    for line in (cpuinfo if cpuinfo is not None else _cpuinfo()).splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return value.strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_flags(cpuinfo: str | None = None) -> list[str]:
    """Which of ``SPEED_FLAGS`` the CPU has, in that order (empty where Linux does not say)."""
    for line in (cpuinfo if cpuinfo is not None else _cpuinfo()).splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            present = set(value.split())
            return [flag for flag in SPEED_FLAGS if flag in present]
    return []


def machine_line() -> str:
    """One line naming the machine: CPU model, the cores this process may use, its speed flags."""
    flags = cpu_flags()
    return (
        f"{cpu_model()}, {available_cores()} of {os.cpu_count()} cores, "
        f"{' '.join(flags) if flags else 'none of ' + ' '.join(SPEED_FLAGS)}"
    )


def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


if __name__ == "__main__":
    print(f"Machine: {machine_line()}")
