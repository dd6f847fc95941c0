"""What the Dask workers of a Slurm/PBS sweep need to authenticate and to listen on one address
only (issue 56): TLS certificates made for one sweep, and the job script's line that finds the
address through which a compute node reaches the scheduler. Used by :mod:`qoslab.runs.executors`.
"""

from __future__ import annotations

import contextlib
import secrets
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path


class TlsSetupError(Exception):
    """The sweep's certificates could not be made (no ``openssl``, or it failed)."""


#: The shell variable of a job script that holds the address its workers bind.
WORKER_HOST_VAR = "QOSLAB_WORKER_HOST"

# The local IPv4 address of the route to argv[1] (a UDP "connect" sends nothing).
_ROUTE_SRC = (
    "import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); "
    "s.connect((sys.argv[1],9)); print(s.getsockname()[0])"
)
# The IPv4 address of interface argv[1], as dask-worker --interface finds it.
_INTERFACE_SRC = "import sys; from distributed.utils import get_ip_interface as g; print(g(sys.argv[1]))"


def worker_host_line(python: str, *, scheduler_host: str | None = None, interface: str | None = None) -> str:
    """The job script line that sets ``$QOSLAB_WORKER_HOST`` to the address of ``interface``
    or else the address through which the compute node reaches ``scheduler_host`` (IPv4),
    found as the job starts; the job ends if there is none."""
    src, arg = (_INTERFACE_SRC, interface) if interface is not None else (_ROUTE_SRC, scheduler_host)
    if arg is None:
        raise ValueError("worker_host_line needs scheduler_host or interface")
    return f"{WORKER_HOST_VAR}=$({shlex.quote(python)} -c {shlex.quote(src)} {shlex.quote(arg)}) || exit 1"


#: Days that the certificates made for a sweep are valid. Their CA's key is deleted as soon as
#: it has signed the one certificate, so that nothing else can ever be signed by it.
SWEEP_CERT_DAYS = 30


def make_certificates(parent: str | Path) -> Path:
    """Makes a fresh folder ``parent/tls-XXXXXXXXXXXX`` (mode 0700) with :data:`TLS_FILES`
    for one sweep: a certificate authority of its own and one certificate signed by it (P-256
    keys, valid :data:`SWEEP_CERT_DAYS` days) that the scheduler, the workers and the client
    present. ``parent`` must be on a file system the compute nodes read. Made with the
    ``openssl`` command, as docs/experiments.md shows for ``--tls-dir`` (Python's
    ``cryptography`` is not among qoslab's dependencies)."""
    if shutil.which("openssl") is None:
        raise TlsSetupError(
            "openssl is not on the PATH: it makes the sweep's TLS certificates; give --tls-dir DIR "
            "(ca.pem, cert.pem, key.pem) or, on a network nobody else reaches, --insecure"
        )
    base = Path(parent)
    base.mkdir(parents=True, exist_ok=True)
    d = base / f"tls-{secrets.token_hex(6)}"
    d.mkdir(mode=0o700)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    days = ["-days", str(SWEEP_CERT_DAYS)]
    leaf = "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
    (d / "leaf.cnf").write_text(leaf + "extendedKeyUsage=serverAuth,clientAuth\n")
    steps = [
        ["req", "-x509", *ec, *days, "-subj", "/CN=qoslab-sweep-ca", "-keyout", "ca-key.pem",
         "-out", "ca.pem", "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
        ["req", *ec, "-subj", "/CN=qoslab-sweep", "-keyout", "key.pem", "-out", "req.pem"],
        ["x509", "-req", "-in", "req.pem", "-CA", "ca.pem", "-CAkey", "ca-key.pem", *days,
         "-set_serial", f"0x{secrets.token_hex(8)}", "-extfile", "leaf.cnf", "-out", "cert.pem"],
    ]  # fmt: skip
    try:
        for args in steps:
            p = subprocess.run(["openssl", *args], cwd=d, capture_output=True, text=True, timeout=60)
            if p.returncode != 0:
                last = (p.stderr.strip().splitlines() or ["no message"])[-1]
                raise TlsSetupError(
                    f"openssl {args[0]} failed making the sweep's certificates in {d}: {last}"
                )
    except BaseException:
        shutil.rmtree(d, ignore_errors=True)
        raise
    finally:
        for f in ("ca-key.pem", "req.pem", "leaf.cnf"):
            (d / f).unlink(missing_ok=True)
    (d / "key.pem").chmod(0o600)
    return d


@contextlib.contextmanager
def sweep_certificates(parent: str | Path) -> Iterator[Path]:
    """:func:`make_certificates` in ``parent`` for the time of a sweep: removed afterwards, and
    so are the folders made for them that stayed empty."""
    base = Path(parent).absolute()
    made = [d for d in (base, *base.parents) if not d.exists()]
    certs = make_certificates(base)
    try:
        yield certs
    finally:
        shutil.rmtree(certs, ignore_errors=True)
        for d in made:  # innermost first
            with contextlib.suppress(OSError):
                d.rmdir()
