"""The solver tests pass under a second SIMD path, not only under the one this CPU picks.

numpy and OpenBLAS choose their kernels at run time from the CPU's instruction sets (AVX-512, AVX2, ...), and
each kernel adds in its own order. An iterative solver then takes another path on another CPU, and a test that
asserts an iteration count, a convergence flag, an exact float or a tie-break order passes on its author's
machine and fails on a user's. The tests marked ``simd`` (LMNN, WDA, the OT solvers, the NSGA-II selection)
run here a second time, in a child process with other kernels: OpenBLAS's ``OPENBLAS_CORETYPE`` names another
core type than the one it picked here, and ``NPY_DISABLE_CPU_FEATURES`` turns off numpy's dispatched kernels,
so that numpy runs its baseline ones. The whole suite runs so with the same two variables set.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

#: What a child process reports of its kernels: OpenBLAS's core types (numpy's and SciPy's libraries) and
#: numpy's dispatched groups of instruction sets, with whether each is on.
_PROBE = """
import json, numpy, scipy.linalg, threadpoolctl
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
blas = sorted({i.get("architecture") or "?" for i in threadpoolctl.threadpool_info() if i["internal_api"] == "openblas"})
print(json.dumps({"blas": blas, "dispatch": {f: bool(__cpu_features__.get(f)) for f in __cpu_dispatch__},
                  "avx": bool(__cpu_features__.get("AVX"))}))
"""

#: OpenBLAS core types of x86-64 whose kernels use AVX-512; on such a CPU the second path is AVX2's (Haswell,
#: the kernels AMD's Zen and most cluster nodes without AVX-512 run), elsewhere AVX's without FMA (Sandybridge).
_AVX512_CORES = {"SKYLAKEX", "COOPERLAKE", "SAPPHIRERAPIDS"}


def _kernels(env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def second_simd_path(native: dict) -> dict[str, str]:
    """The environment variables that give other kernels than ``native`` (:data:`_PROBE`'s report)."""
    if platform.machine().lower() in {"x86_64", "amd64"}:
        if {arch.upper() for arch in native["blas"]} & _AVX512_CORES:
            core = "Haswell"
        else:
            core = "Sandybridge" if native["avx"] else "Nehalem"
    else:
        core = "ARMV8"  # the generic kernels of 64-bit Arm
    disabled = " ".join(group for group, on in native["dispatch"].items() if on)
    env = {"OPENBLAS_CORETYPE": core}
    if disabled:
        env["NPY_DISABLE_CPU_FEATURES"] = disabled
    return env


def test_second_simd_path_is_another_path():
    native = {"blas": ["SkylakeX"], "dispatch": {"X86_V3": True, "X86_V4": True, "AVX512_SPR": False},
              "avx": True}
    assert second_simd_path(native)["NPY_DISABLE_CPU_FEATURES"] == "X86_V3 X86_V4"
    if platform.machine().lower() in {"x86_64", "amd64"}:
        assert second_simd_path(native)["OPENBLAS_CORETYPE"] == "Haswell"
        assert second_simd_path({**native, "blas": ["Zen"]})["OPENBLAS_CORETYPE"] == "Sandybridge"
        assert second_simd_path({**native, "blas": ["Haswell"]})["OPENBLAS_CORETYPE"] == "Sandybridge"
    assert "NPY_DISABLE_CPU_FEATURES" not in second_simd_path({**native, "dispatch": {"X86_V3": False}})


@pytest.mark.subprocess
def test_solver_tests_pass_under_a_second_simd_path():
    env = dict(os.environ)
    native = _kernels(env)
    settings = second_simd_path(native)
    env.update(settings)
    second = _kernels(env)
    blas_changed = bool(second["blas"]) and second["blas"] != native["blas"]
    numpy_changed = second["dispatch"] != native["dispatch"]
    assert blas_changed or numpy_changed, ("the child runs the same kernels", native, second)
    assert not any(second["dispatch"].values()), second  # numpy's baseline kernels only
    files = sorted(str(p.relative_to(REPO)) for p in (REPO / "tests").glob("test_*.py")
                   if p.name != Path(__file__).name and "pytest.mark.simd" in p.read_text())
    assert len(files) >= 5, files
    proc = subprocess.run([sys.executable, "-m", "pytest", "-m", "simd", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "--durations=0", "--durations-min=5", *files],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    summary = f"under {settings} (native {native}):\n{proc.stdout[-6000:]}{proc.stderr[-2000:]}"
    assert proc.returncode == 0, summary
    assert " passed" in proc.stdout.splitlines()[-1] and "failed" not in proc.stdout.splitlines()[-1], summary

