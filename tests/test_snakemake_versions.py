"""The workflow runs on the oldest Snakemake its Snakefile admits (``min_version``), not only on the pinned one:
that release is installed in an environment of its own (a virtual environment that sees this one's packages
behind its own), with the versions of its dependencies that it requires, and runs the test configuration."""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from .conftest import REPO, copy_workflow, snakemake_env


def _min_version() -> str:
    found = re.search(r'^min_version\("([0-9.]+)"\)', (REPO / "Snakefile").read_text(), re.MULTILINE)
    assert found, "the Snakefile names no min_version"
    return found.group(1)


def _environment(folder: Path, version: str) -> Path:
    """A virtual environment with Snakemake ``version`` and the dependencies it requires that this one's
    packages do not satisfy; this environment's packages behind them. Its python."""
    from importlib.metadata import PackageNotFoundError, distribution
    from importlib.metadata import version as installed

    from packaging.requirements import Requirement

    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, capture_output=True)
    python = folder / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "zz_otfs_base.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    pip = [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check"]
    subprocess.run([*pip, f"snakemake=={version}"], check=True, capture_output=True)
    wanted = subprocess.run([str(python), "-c", "from importlib.metadata import requires; "
                             "print('\\n'.join(requires('snakemake')))"], check=True, capture_output=True,
                            text=True).stdout.splitlines()
    missing = []
    for line in wanted:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        try:
            distribution(req.name)
            ok = req.specifier.contains(installed(req.name), prereleases=True)
        except PackageNotFoundError:
            ok = False
        if not ok:
            missing.append(str(req))
    if missing:
        subprocess.run([*pip, *missing], check=True, capture_output=True)
    return python


@pytest.mark.pipeline
def test_the_test_configuration_runs_on_the_oldest_snakemake_the_snakefile_admits(tmp_path):
    version = _min_version()
    python = _environment(tmp_path / "venv", version)
    got = subprocess.run([str(python), "-c", "import snakemake; print(snakemake.__version__)"], check=True,
                         capture_output=True, text=True).stdout.strip()
    from packaging.version import Version

    assert Version(got) == Version(version)
    work = copy_workflow(tmp_path / "work")

    def run(*args):
        proc = subprocess.run([str(python), "-m", "snakemake", "--snakefile", str(work / "Snakefile"),
                               "--directory", str(work), *args], capture_output=True, text=True,
                              env=snakemake_env(), cwd=work)
        assert proc.returncode == 0, f"Snakemake {version}: {' '.join(args)}\n{proc.stdout}\n{proc.stderr}"
        return proc

    # every job of `available` is planned, and one figure with all it needs runs to its end
    planned = run("--dry-run", "available", "--configfile", "config/test.yaml")
    assert "This was a dry-run" in planned.stdout + planned.stderr
    run("--cores", "2", "figure7", "--configfile", "config/test.yaml")
    assert [p.name for p in (work / "results").glob("*/figure7/figure7.pdf")] == ["figure7.pdf"]
    # a --configfile that is not valid YAML is named by file and line under this release too (the logger plug-in)
    (work / "bad.yaml").write_text("protocol:\n  pairs: [a-b\n  x: 1\n")
    bad = subprocess.run([str(python), "-m", "snakemake", "--snakefile", str(work / "Snakefile"), "--directory",
                          str(work), "-n", "figure7", "--configfile", "bad.yaml"], capture_output=True, text=True,
                         env=snakemake_env(), cwd=work)
    assert bad.returncode != 0 and "bad.yaml, line 3, column 4: invalid YAML" in bad.stdout + bad.stderr
