"""A real one-node SLURM cluster on localhost, for testing the SLURM profiles.

It starts, from Debian's packages (``slurmctld slurmd slurmdbd slurm-client
munge mariadb-server``) and as root, every daemon a small site runs:

* ``munged`` as the ``munge`` user, with a fresh key;
* a private MariaDB server on a spare port, holding the accounting database;
* ``slurmdbd``, so that ``sacct`` answers as on a real cluster and the
  executor plugin's default status polling is what gets tested;
* ``slurmctld`` and ``slurmd``, with one node: this machine, at 90% of the
  memory ``slurmd -C`` reports, and one partition.

All state, logs, sockets and pid files live in one folder. SLURM's clients
must find the configuration at ``/etc/slurm/slurm.conf`` (the executor
plugin's job step drops ``SLURM_*`` variables, ``SLURM_CONF`` included,
before its inner ``srun``), so that path is made a symlink to the folder's
file, and removed again on stop; an existing real file there is never
touched. Every daemon is stopped by the PID in its pid file, never by name.

From the repository root, for trying the profiles by hand::

    python -m tests.localslurm start /tmp/otfs-slurm   # prints the environment to use
    snakemake --profile profiles/slurm-ci ...
    python -m tests.localslurm stop /tmp/otfs-slurm
"""

from __future__ import annotations

import argparse
import atexit
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["LocalSlurm", "SlurmSetupError", "missing_programs"]

CONF_LINK = Path("/etc/slurm/slurm.conf")
DBD_CONF_LINK = Path("/etc/slurm/slurmdbd.conf")
MUNGE_SOCKET = Path("/run/munge/munge.socket.2")
CLUSTER = "otfsci"
ACCOUNT = "otfs"
PARTITION = "ci"
PACKAGES = "slurmctld slurmd slurmdbd slurm-client munge mariadb-server"
PROGRAMS = ["munged", "mungekey", "slurmctld", "slurmd", "slurmdbd", "sinfo", "sbatch", "squeue",
            "sacct", "sacctmgr", "scancel", "srun", "mariadbd", "mariadb-install-db", "runuser"]


class SlurmSetupError(RuntimeError):
    """The local cluster could not be started; the message names the step and its log."""


def missing_programs() -> list[str]:
    """The programs a local cluster needs that are not on ``PATH`` (``/usr/sbin`` included)."""
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    return [p for p in PROGRAMS if shutil.which(p, path=path) is None]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _which(name: str) -> str:
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    found = shutil.which(name, path=path)
    if found is None:
        raise SlurmSetupError(f"{name} not found; install Debian's packages: apt-get install {PACKAGES}")
    return found


def _tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return f"({path} not written)"
    return f"last lines of {path}:\n" + "\n".join(text[-lines:])


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours counts as gone once reaped.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


class LocalSlurm:
    """Start and stop a one-node SLURM cluster with accounting in ``root``.

    Parameters
    ----------
    root : path
        Folder for every file the cluster writes. Created; it must be
        reachable by the ``munge`` user (``/tmp/...`` is).
    memory_fraction : float
        Share of the memory ``slurmd -C`` reports that the node offers.
    """

    def __init__(self, root, memory_fraction: float = 0.9):
        self.root = Path(root).resolve()
        self.memory_fraction = memory_fraction
        self.env = dict(os.environ)
        self._started: list[tuple[str, Path]] = []  # (daemon, pid file), in start order
        self._linked: list[Path] = []

    # ------------------------------------------------------------------ helpers
    def _run(self, args, what: str, log: Path | None = None, **kw) -> subprocess.CompletedProcess:
        proc = subprocess.run(args, capture_output=True, text=True, env=self.env, **kw)
        if proc.returncode != 0:
            extra = f"\n{_tail(log)}" if log is not None else ""
            raise SlurmSetupError(
                f"{what} failed (exit {proc.returncode}): {' '.join(map(str, args))}\n"
                f"{proc.stdout}{proc.stderr}{extra}"
            )
        return proc

    def _wait_pidfile(self, name: str, pidfile: Path, log: Path, timeout: float = 30.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                pid = int(pidfile.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                time.sleep(0.1)
                continue
            if _pid_alive(pid):
                return pid
            time.sleep(0.1)
        raise SlurmSetupError(f"{name} did not start within {timeout:.0f} s (no live PID in {pidfile})\n"
                              f"{_tail(log)}")

    def _wait_for(self, check, what: str, log: Path, timeout: float = 60.0):
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            ok, last = check()
            if ok:
                return
            time.sleep(0.5)
        raise SlurmSetupError(f"timed out after {timeout:.0f} s waiting for {what}; last answer: {last!r}\n"
                              f"{_tail(log)}")

    def _link(self, link: Path, target: Path):
        if link.is_symlink():
            if Path(os.readlink(link)) != target and Path(os.readlink(link)).exists():
                raise SlurmSetupError(f"{link} already points to {os.readlink(link)}, a live configuration; "
                                      "stop that cluster first")
            link.unlink()
        elif link.exists():
            raise SlurmSetupError(f"{link} is a real file: this machine has its own SLURM configuration, "
                                  "which this test will not replace")
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
        self._linked.append(link)

    # ------------------------------------------------------------------ start
    def start(self) -> LocalSlurm:
        if os.geteuid() != 0:
            raise SlurmSetupError("the local SLURM cluster runs its daemons as root; run as root")
        missing = missing_programs()
        if missing:
            raise SlurmSetupError(f"missing programs {missing}; install Debian's packages: apt-get install {PACKAGES}")
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        for sub in ("etc", "log", "run", "state", "spool"):
            (self.root / sub).mkdir(exist_ok=True)
        self.env["SLURM_CONF"] = str(self.root / "etc" / "slurm.conf")
        atexit.register(self.stop)  # a safety net: the daemons never outlive this process
        try:
            self._start_munge()
            self._start_mariadb()
            self._write_configs()
            self._start_slurmdbd()
            self._register_cluster()
            self._start_slurmctld_and_slurmd()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_munge(self):
        mdir = self.root / "munge"
        mdir.mkdir(exist_ok=True)
        munge = pwd.getpwnam("munge")
        private = mdir / "private"  # the key and seed: munge's alone
        private.mkdir(exist_ok=True)
        for folder, mode in ((mdir, 0o755), (private, 0o700)):  # the socket's folder: open to all
            os.chown(folder, munge.pw_uid, munge.pw_gid)
            folder.chmod(mode)
        key, log, pidfile = private / "munge.key", self.root / "log" / "munged.log", mdir / "munged.pid"
        runuser = _which("runuser")
        self._run([runuser, "-u", "munge", "--", _which("mungekey"), "--create", f"--keyfile={key}",
                   "--force"], "creating the munge key")
        # The log must be writable by munge: it lives in munge's folder, linked from log/.
        mlog = mdir / "munged.log"
        if not log.exists():
            log.symlink_to(mlog)
        # The default socket: SLURM's clients reach munged there whatever AuthInfo says.
        self.munge_socket = MUNGE_SOCKET
        if MUNGE_SOCKET.exists():
            raise SlurmSetupError(f"{MUNGE_SOCKET} exists: a munged already runs on this machine; stop it first")
        MUNGE_SOCKET.parent.mkdir(parents=True, exist_ok=True)
        os.chown(MUNGE_SOCKET.parent, munge.pw_uid, munge.pw_gid)
        MUNGE_SOCKET.parent.chmod(0o755)
        self._run([runuser, "-u", "munge", "--", _which("munged"), f"--socket={self.munge_socket}",
                   f"--key-file={key}", f"--pid-file={pidfile}", f"--log-file={mlog}",
                   f"--seed-file={private / 'munged.seed'}"], "starting munged", log=mlog)
        self._started.append(("munged", pidfile))
        self._wait_pidfile("munged", pidfile, mlog)

    def _start_mariadb(self):
        data, log = self.root / "mysql", self.root / "log" / "mariadb.log"
        self.db_port, self.db_socket = _free_port(), self.root / "run" / "mysqld.sock"
        pidfile = self.root / "run" / "mariadb.pid"
        self._run([_which("mariadb-install-db"), "--no-defaults", f"--datadir={data}", "--user=root",
                   "--auth-root-authentication-method=normal", "--skip-test-db"],
                  "initialising the MariaDB data folder")
        with open(log, "ab") as out:
            subprocess.Popen(
                [_which("mariadbd"), "--no-defaults", f"--datadir={data}", "--user=root",
                 f"--port={self.db_port}", "--bind-address=127.0.0.1", f"--socket={self.db_socket}",
                 f"--pid-file={pidfile}", "--skip-name-resolve", "--innodb-buffer-pool-size=64M"],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )
        self._started.append(("mariadbd", pidfile))
        self._wait_pidfile("mariadbd", pidfile, log)

        def accepting():
            with socket.socket() as s:
                s.settimeout(0.5)
                return s.connect_ex(("127.0.0.1", self.db_port)) == 0, f"port {self.db_port}"

        self._wait_for(accepting, "MariaDB to accept connections", log)

    def _write_configs(self):
        r = self.root
        self.host = socket.gethostname().split(".")[0]
        self.ctld_port, self.slurmd_port, self.dbd_port = _free_port(), _free_port(), _free_port()
        probe = self._run([_which("slurmd"), "-C"], "slurmd -C").stdout
        fields = dict(tok.split("=", 1) for tok in probe.split()[0:8] if "=" in tok)
        node = {k: fields[k] for k in ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore")
                if k in fields}
        self.cpus = int(node.get("CPUs", os.cpu_count() or 1))
        self.memory_mb = int(int(fields["RealMemory"]) * self.memory_fraction)
        node_line = " ".join(f"{k}={v}" for k, v in node.items())
        (r / "etc" / "slurm.conf").write_text(f"""\
# Written by tests/localslurm.py: one node, this machine, for testing profiles.
ClusterName={CLUSTER}
SlurmctldHost={self.host}(127.0.0.1)
SlurmctldPort={self.ctld_port}
SlurmdPort={self.slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
ReturnToService=2
SchedulerType=sched/backfill
StateSaveLocation={r / 'state'}
SlurmdSpoolDir={r / 'spool'}
SlurmctldPidFile={r / 'run' / 'slurmctld.pid'}
SlurmdPidFile={r / 'run' / 'slurmd.pid'}
SlurmctldLogFile={r / 'log' / 'slurmctld.log'}
SlurmdLogFile={r / 'log' / 'slurmd.log'}
SlurmctldDebug=info
SlurmdDebug=info
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={self.dbd_port}
MinJobAge=300
InactiveLimit=0
KillWait=10
Waittime=0
NodeName={self.host} NodeAddr=127.0.0.1 {node_line} RealMemory={self.memory_mb} State=UNKNOWN
PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        dbd = r / "etc" / "slurmdbd.conf"
        dbd.write_text(f"""\
# Written by tests/localslurm.py
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort={self.dbd_port}
SlurmUser=root
PidFile={r / 'run' / 'slurmdbd.pid'}
LogFile={r / 'log' / 'slurmdbd.log'}
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={self.db_port}
StorageUser=root
StorageLoc=slurm_acct_db
""")
        dbd.chmod(0o600)
        self._link(CONF_LINK, r / "etc" / "slurm.conf")
        self._link(DBD_CONF_LINK, dbd)

    def _start_slurmdbd(self):
        log, pidfile = self.root / "log" / "slurmdbd.log", self.root / "run" / "slurmdbd.pid"
        self._run([_which("slurmdbd")], "starting slurmdbd", log=log)
        self._started.append(("slurmdbd", pidfile))
        self._wait_pidfile("slurmdbd", pidfile, log)

        def answering():
            p = subprocess.run([_which("sacctmgr"), "-n", "-P", "list", "cluster"], capture_output=True,
                               text=True, env=self.env)
            return p.returncode == 0, p.stdout + p.stderr

        self._wait_for(answering, "slurmdbd to answer sacctmgr", log)

    def _register_cluster(self):
        sacctmgr = _which("sacctmgr")
        self._run([sacctmgr, "-i", "add", "cluster", CLUSTER], "registering the cluster")
        self._run([sacctmgr, "-i", "add", "account", ACCOUNT, f"Cluster={CLUSTER}",
                   "Description=otfs CI", "Organization=otfs"], "adding the account")
        user = pwd.getpwuid(os.geteuid()).pw_name
        self._run([sacctmgr, "-i", "add", "user", user, f"Account={ACCOUNT}", f"Cluster={CLUSTER}"],
                  "adding the user to the account")

    def _start_slurmctld_and_slurmd(self):
        r = self.root
        ctld_log, ctld_pid = r / "log" / "slurmctld.log", r / "run" / "slurmctld.pid"
        self._run([_which("slurmctld"), "-i"], "starting slurmctld", log=ctld_log)
        self._started.append(("slurmctld", ctld_pid))
        self._wait_pidfile("slurmctld", ctld_pid, ctld_log)
        d_log, d_pid = r / "log" / "slurmd.log", r / "run" / "slurmd.pid"
        self._run([_which("slurmd")], "starting slurmd", log=d_log)
        self._started.append(("slurmd", d_pid))
        self._wait_pidfile("slurmd", d_pid, d_log)

        def idle():
            p = subprocess.run([_which("sinfo"), "-h", "-N", "-o", "%t"], capture_output=True, text=True,
                               env=self.env)
            state = p.stdout.strip()
            return p.returncode == 0 and state == "idle", state or p.stderr.strip()

        self._wait_for(idle, "the node to be idle in sinfo", d_log)

    # ------------------------------------------------------------------ stop
    def pids(self) -> dict[str, int]:
        """The live daemons: name -> PID read from its pid file."""
        out = {}
        for name, pidfile in self._started:
            try:
                pid = int(pidfile.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            if _pid_alive(pid):
                out[name] = pid
        return out

    def stop(self, timeout: float = 30.0) -> dict[str, int]:
        """Cancel jobs, then stop every daemon by the PID in its pid file, last started first.

        Returns the PIDs it stopped. Raises if one outlived SIGKILL. A Ctrl-C
        while it runs is held back until every daemon is stopped.
        """
        import threading

        if threading.current_thread() is not threading.main_thread():
            return self._stop(timeout)
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            return self._stop(timeout)
        finally:
            signal.signal(signal.SIGINT, previous)

    def _stop(self, timeout: float) -> dict[str, int]:
        if any(name == "slurmctld" for name, _ in self._started):
            subprocess.run([_which("scancel"), "--full", f"--partition={PARTITION}"], capture_output=True,
                           env=self.env)
        stopped, survivors = {}, []
        for name, pidfile in reversed(self._started):
            try:
                pid = int(pidfile.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            if not _pid_alive(pid):
                continue
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while _pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if _pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
                time.sleep(0.5)
                if _pid_alive(pid):
                    survivors.append(f"{name} ({pid})")
            stopped[name] = pid
        self._started = []
        for link in self._linked:
            if link.is_symlink():
                link.unlink()
        self._linked = []
        if survivors:
            raise SlurmSetupError(f"daemons still running after SIGKILL: {', '.join(survivors)}")
        return stopped

    def __enter__(self) -> LocalSlurm:
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _state_file(root: Path) -> Path:
    return Path(root) / "daemons.tsv"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.localslurm", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("root", type=Path)
    args = parser.parse_args(argv)
    if args.action == "start":
        cluster = LocalSlurm(args.root).start()
        _state_file(args.root).write_text(
            "".join(f"{n}\t{p}\n" for n, p in cluster._started) + "".join(f"link\t{x}\n" for x in cluster._linked))
        print(f"cluster {CLUSTER} up: partition {PARTITION}, account {ACCOUNT}, "
              f"{cluster.cpus} CPUs, {cluster.memory_mb} MB; logs in {args.root / 'log'}")
        print(f"export SLURM_CONF={cluster.env['SLURM_CONF']}")
        return 0
    cluster = LocalSlurm(args.root)
    state = _state_file(args.root)
    if not state.exists():
        print(f"{state} not found: nothing started there", file=sys.stderr)
        return 1
    for line in state.read_text().splitlines():
        kind, path = line.split("\t")
        if kind == "link":
            cluster._linked.append(Path(path))
        else:
            cluster._started.append((kind, Path(path)))
    cluster.env["SLURM_CONF"] = str(args.root / "etc" / "slurm.conf")
    for name, pid in cluster.stop().items():
        print(f"stopped {name} (PID {pid})")
    state.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
