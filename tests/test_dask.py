"""Dask execution on a real loopback cluster, and the Slurm/PBS job scripts of dask-jobqueue."""

import os
import subprocess
import sys

import pytest

import qoslab.report.results
from conftest import QOSLAB, SCENARIOS, one_line_error, run_window, stores_agree

distributed = pytest.importorskip(
    "distributed", reason="the dask extra is not installed (pip install 'qoslab[dask]')"
)
pytest.importorskip("dask_jobqueue", reason="the dask extra is not installed (pip install 'qoslab[dask]')")

from qoslab.runs.executors import (  # noqa: E402
    ExecutorError,
    JobqueueOptions,
    build_jobqueue_cluster,
    jobqueue_kwargs,
)

S1 = str(SCENARIOS / "fdd-red-s1.toml")
SWEEP = [
    S1,
    "--grid",
    "link.bottleneck.queue_ab.limit=40pkts,100pkts",
    "--grid",
    "tcp.variant=reno,newreno",
    "--seeds",
    "3",
    *run_window("20s", "5s"),
]


def test_sweep_on_a_dask_cluster_stores_what_the_local_pool_stores(tmp_path):
    cluster = distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    )
    try:
        addr = cluster.scheduler_address
        assert addr.startswith("tcp://127.0.0.1:")
        p = subprocess.run(
            [
                QOSLAB,
                "sweep",
                *SWEEP,
                "--store",
                str(tmp_path / "dask"),
                "--executor",
                "dask",
                "--scheduler",
                addr,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert p.returncode == 0, p.stderr
        assert "12 runs: 12 computed" in p.stdout
        workers = set(cluster.scheduler_info["workers"])
    finally:
        cluster.close()
    q = subprocess.run(
        [QOSLAB, "sweep", *SWEEP, "--store", str(tmp_path / "local"), "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert q.returncode == 0, q.stderr
    stores_agree(tmp_path / "dask", tmp_path / "local")
    runs = qoslab.report.results.load(tmp_path / "dask")
    assert (runs["status"] == "ok").all() and (runs["attempts"] == 1).all()
    # the runs really were computed by the cluster's worker processes, not locally
    assert len(workers) == 2
    assert set(runs["worker"]).isdisjoint(set(qoslab.report.results.load(tmp_path / "local")["worker"]))


def test_failures_on_dask_are_recorded_and_retried(tmp_path):

    from qoslab.runs.executors import DaskExecutor
    from qoslab.runs.sweep import plan, run_sweep
    from qoslab.store import Store

    tests_dir = os.path.dirname(__file__)
    cluster = distributed.LocalCluster(
        n_workers=1, processes=True, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    )
    try:
        client = distributed.Client(cluster, set_as_default=False)
        client.run(lambda d=tests_dir: sys.path.insert(0, d))
        sc = qoslab.load_scenario(S1).with_overrides(
            ["duration=5s", "measurement.start=0s", "measurement.end=5s"]
        )
        with Store(tmp_path / "st") as st:
            rep = run_sweep(
                plan([({}, sc)], [1, 2, 3], "d", ["sweep_helpers:fail_on_seed_2"]),
                st,
                DaskExecutor(client=client),
                progress=False,
            )
        client.close()
    finally:
        cluster.close()
    assert [(s.seed, e) for s, e in rep.failed] == [(2, "ValueError: boom on seed 2")]
    runs = qoslab.report.results.load(tmp_path / "st")
    assert dict(zip(runs["seed"], runs["status"], strict=True)) == {1: "ok", 2: "failed", 3: "ok"}
    assert int(runs[runs["seed"] == 2]["attempts"].iloc[0]) == 2


def test_workers_of_another_qoslab_version_stop_the_sweep_before_any_run(tmp_path):
    from qoslab import _core
    from qoslab.runs.executors import check_worker_versions

    cluster = distributed.LocalCluster(
        n_workers=1, processes=True, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    )
    try:
        client = distributed.Client(cluster, set_as_default=False)
        check_worker_versions(client, _core.__version__)  # the same build: accepted
        with pytest.raises(ExecutorError) as e:
            check_worker_versions(client, "0.1.0+000000000000")
        client.close()
    finally:
        cluster.close()
    msg = str(e.value)
    assert "\n" not in msg
    assert f"runs qoslab {_core.__version__} ({sys.executable}), this process 0.1.0+000000000000" in msg
    assert "1 of 1 workers differ" in msg


def test_slurm_job_script():
    opts = JobqueueOptions(
        queue="short",
        account="netlab",
        cores=8,
        processes=4,
        memory="16GB",
        walltime="02:30:00",
        jobs=3,
        job_extra=("--exclusive",),
        prologue=("source /opt/qoslab/.venv/bin/activate",),
        python="/opt/qoslab/.venv/bin/python",
        scheduler_host="127.0.0.1",
        insecure=True,
    )
    cluster = build_jobqueue_cluster("slurm", opts)
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    lines = script.splitlines()
    for directive in (
        "#SBATCH -p short",
        "#SBATCH -A netlab",
        "#SBATCH --cpus-per-task=8",
        "#SBATCH -t 02:30:00",
        "#SBATCH --exclusive",
        "#SBATCH -J qoslab-worker",
    ):
        assert directive in lines, script
    assert any(x.startswith("#SBATCH --mem=") for x in lines)
    prologue = lines.index("source /opt/qoslab/.venv/bin/activate")
    worker = next(i for i, x in enumerate(lines) if "distributed.cli.dask_worker" in x)
    # the user's prologue, then the address the workers bind is looked up, then the worker
    host = next(i for i, x in enumerate(lines) if x.startswith("QOSLAB_WORKER_HOST=$("))
    assert prologue < host < worker
    cmd = lines[worker]
    assert cmd.startswith("/opt/qoslab/.venv/bin/python -m distributed.cli.dask_worker tcp://127.0.0.1:")
    assert "--nworkers 4" in cmd and "--nthreads 2" in cmd and "--host $QOSLAB_WORKER_HOST" in cmd
    assert "--dashboard-address $QOSLAB_WORKER_HOST:0" in cmd


def test_pbs_job_script():
    opts = JobqueueOptions(
        queue="workq",
        account="proj7",
        cores=4,
        memory="8GB",
        walltime="00:45:00",
        scheduler_host="127.0.0.1",
        insecure=True,
    )
    cluster = build_jobqueue_cluster("pbs", opts)
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    lines = script.splitlines()
    for directive in ("#PBS -q workq", "#PBS -A proj7", "#PBS -l walltime=00:45:00", "#PBS -N qoslab-worker"):
        assert directive in lines, script
    assert any(x.startswith("#PBS -l select=1:ncpus=4") for x in lines), script
    cmd = next(x for x in lines if "dask_worker" in x)
    assert cmd.startswith(f"{sys.executable} -m distributed.cli.dask_worker")
    assert "--nworkers 4" in cmd and "--nthreads 1" in cmd


def test_jobqueue_options_are_checked():
    with pytest.raises(ExecutorError, match="--processes must be between 1 and --cores"):
        jobqueue_kwargs(JobqueueOptions(cores=2, processes=3))
    with pytest.raises(ExecutorError, match="unknown batch system"):
        build_jobqueue_cluster("lsf", JobqueueOptions())
    with pytest.raises(ExecutorError, match="slurm cluster without TLS: give tls_dir .* or insecure=True"):
        build_jobqueue_cluster("slurm", JobqueueOptions(scheduler_host="127.0.0.1"))
    with pytest.raises(ExecutorError, match="--insecure and --tls-dir contradict"):
        jobqueue_kwargs(JobqueueOptions(tls_dir="tls", insecure=True))
    # --memory and --walltime went into the job script as given (`mem=-1000000000B`,
    # `#SBATCH -t abc`) or failed inside dask-jobqueue with its own words
    for memory in ("-1GB", "0", "0GB", "1e30GB", "2 gigs", "2PB"):
        with pytest.raises(ExecutorError, match=r"^--memory: expected "):
            jobqueue_kwargs(JobqueueOptions(memory=memory))
    for walltime in ("abc", "-1:00:00", "", "00:00:00", "1:60:00", "2-00:00:00"):
        with pytest.raises(ExecutorError, match=r"^--walltime: expected a time limit such as 01:00:00"):
            jobqueue_kwargs(JobqueueOptions(walltime=walltime))
    accepted = (("512MiB", "48:00:00"), ("1.5GB", "0:00:30"), ("16G", "01:00:00"), ("2g", "1:00:00"))
    for memory, walltime in accepted:
        jobqueue_kwargs(JobqueueOptions(memory=memory, walltime=walltime, insecure=True))


def test_cli_prints_the_job_script_without_submitting(tmp_path):
    store = tmp_path / "never"
    p = subprocess.run(
        [
            QOSLAB,
            "sweep",
            S1,
            "--grid",
            "link.bottleneck.delay=5ms,10ms",
            "--store",
            str(store),
            "--executor",
            "slurm",
            "--queue",
            "gpu",
            "--cores",
            "2",
            "--walltime",
            "00:10:00",
            "--print-job-script",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert "#SBATCH -p gpu" in p.stdout and "#SBATCH -t 00:10:00" in p.stdout and "--nworkers 2" in p.stdout
    p = subprocess.run(
        [
            QOSLAB,
            "reproduce",
            "red-baseline",
            "--store",
            str(store),
            "--executor",
            "pbs",
            "--queue",
            "q1",
            "--print-job-script",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert "#PBS -q q1" in p.stdout
    assert not store.exists(), "printing made the store, or left the certificates made for it"


# -- listeners: loopback by default, mutual TLS when asked ---------------------------------------------


def _tls_dir(d):
    """A CA and one certificate signed by it (for 127.0.0.1), as docs/experiments.md makes them."""
    import shutil

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    d.mkdir()

    def ssl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    ssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=qoslab-ca",
        "-keyout",
        "ca-key.pem",
        "-out",
        "ca.pem",
    )
    ssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=qoslab", "-keyout", "key.pem", "-out", "req.pem"
    )
    (d / "san.cnf").write_text("subjectAltName = IP:127.0.0.1, DNS:localhost\n")
    ssl(
        "x509",
        "-req",
        "-in",
        "req.pem",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca-key.pem",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.cnf",
        "-out",
        "cert.pem",
    )
    return d


def test_sweep_over_mutual_tls_and_refused_without_a_certificate(tmp_path):
    from qoslab.runs.executors import dask_security

    tls = _tls_dir(tmp_path / "tls")
    sec = dask_security(tls)
    cluster = distributed.LocalCluster(
        n_workers=1,
        processes=True,
        threads_per_worker=1,
        host="127.0.0.1",
        protocol="tls://",
        security=sec,
        dashboard_address=None,
    )
    try:
        addr = cluster.scheduler_address
        assert addr.startswith("tls://127.0.0.1:")
        short = [
            S1,
            "--seeds",
            "2",
            *run_window("5s", "0s"),
            "--executor",
            "dask",
            "--scheduler",
            addr,
        ]
        p = subprocess.run(
            [QOSLAB, "sweep", *short, "--tls-dir", str(tls), "--store", str(tmp_path / "st")],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert p.returncode == 0, p.stderr
        assert "2 runs: 2 computed" in p.stdout
        # Without a certificate: refused before connecting. With a certificate of another CA:
        # the handshake fails and nothing is submitted.
        p = subprocess.run(
            [QOSLAB, "sweep", *short, "--store", str(tmp_path / "st2")],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert "speaks TLS: give --tls-dir DIR" in one_line_error(p)
        other = _tls_dir(tmp_path / "other")
        p = subprocess.run(
            [QOSLAB, "sweep", *short, "--tls-dir", str(other), "--store", str(tmp_path / "st3")],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert f"cannot connect to the Dask scheduler at {addr}" in one_line_error(p)
    finally:
        cluster.close()
    with pytest.raises(ExecutorError, match="missing key.pem"):
        (tls / "key.pem").unlink() or dask_security(tls)


def test_schedulers_qoslab_starts_listen_on_loopback_unless_told():
    kw = jobqueue_kwargs(JobqueueOptions())
    assert kw["scheduler_options"] == {"host": "127.0.0.1", "dashboard_address": "127.0.0.1:8787"}
    kw = jobqueue_kwargs(JobqueueOptions(interface="ib0"))
    assert kw["scheduler_options"] == {"dashboard_address": "127.0.0.1:8787"}  # the interface's address
    kw = jobqueue_kwargs(JobqueueOptions(scheduler_host="10.1.2.3"))
    assert kw["scheduler_options"]["host"] == "10.1.2.3"
    cluster = build_jobqueue_cluster("slurm", JobqueueOptions(insecure=True))
    try:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        info = cluster.scheduler_info
        assert all(not str(v).startswith(("0.0.0.0", "[::]")) for v in info.get("services", {}).values())
    finally:
        cluster.close()
    from qoslab.runs.executors import JobqueueExecutor

    with pytest.raises(ExecutorError, match="the batch jobs must reach this process's Dask scheduler"):
        JobqueueExecutor("slurm", JobqueueOptions())


def test_job_script_with_tls_passes_the_certificates_to_the_workers(tmp_path):
    tls = _tls_dir(tmp_path / "tls")
    cluster = build_jobqueue_cluster("slurm", JobqueueOptions(scheduler_host="127.0.0.1", tls_dir=str(tls)))
    try:
        assert cluster.scheduler_address.startswith("tls://127.0.0.1:")
        cmd = next(x for x in cluster.job_script().splitlines() if "dask_worker" in x)
    finally:
        cluster.close()
    assert "tls://127.0.0.1:" in cmd
    for flag in ("--tls-ca-file", "--tls-cert", "--tls-key"):
        assert flag in cmd, cmd


# -- worker jobs: bound to the scheduler's route, mutual TLS unless --insecure (issue 56) ---------------


def _print_script(store, *extra, env=None):
    p = subprocess.run(
        [QOSLAB, "sweep", S1, "--store", str(store), "--executor", "slurm", *extra, "--print-job-script"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    return p


def test_worker_jobs_bind_the_route_to_the_scheduler_and_speak_tls_unless_insecure(tmp_path):
    """The job script binds its workers to the address through which the node reaches the
    scheduler (looked up when the job starts; dask-worker binds every interface otherwise)
    and gives them certificates made for the sweep; going without TLS needs --insecure, and
    where the certificates cannot be made the sweep is refused with one line."""
    store = tmp_path / "st"
    p = _print_script(store, "--scheduler-host", "127.0.0.1")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    look = next(x for x in lines if x.startswith("QOSLAB_WORKER_HOST=$("))
    assert look.endswith(" 127.0.0.1) || exit 1"), look
    cmd = next(x for x in lines if "distributed.cli.dask_worker" in x)
    assert " tls://127.0.0.1:" in cmd and "--protocol tls://" in cmd and "--host $QOSLAB_WORKER_HOST" in cmd
    assert "--dashboard-address $QOSLAB_WORKER_HOST:0" in cmd  # its HTTP server too
    folder = str(store / "jobs" / "tls-")
    for flag, f in (("--tls-ca-file", "ca.pem"), ("--tls-cert", "cert.pem"), ("--tls-key", "key.pem")):
        arg = cmd.split(f"{flag} ")[1].split()[0]
        assert arg.startswith(folder) and arg.endswith(f"/{f}"), cmd
    assert not store.exists(), "the printed script's certificates were left behind"
    # the looked-up address, as the job's shell finds it: the loopback route
    got = subprocess.run(
        ["bash", "-c", f"{look}; echo $QOSLAB_WORKER_HOST"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert got.stdout.strip() == "127.0.0.1", got
    # with --interface: that interface's address (dask-worker binds it; its HTTP server too)
    kw = jobqueue_kwargs(JobqueueOptions(interface="lo", insecure=True))
    look = kw["job_script_prologue"][-1]
    assert "get_ip_interface" in look and look.endswith(" lo) || exit 1"), look
    assert kw["worker_extra_args"] == ["--no-dashboard", "--dashboard-address", "$QOSLAB_WORKER_HOST:0"]
    got = subprocess.run(["bash", "-c", f"{look}; echo $QOSLAB_WORKER_HOST"], capture_output=True, text=True)
    assert got.stdout.strip() == "127.0.0.1", got

    p = _print_script(store, "--scheduler-host", "127.0.0.1", "--insecure")
    assert p.returncode == 0, p.stderr
    cmd = next(x for x in p.stdout.splitlines() if "distributed.cli.dask_worker" in x)
    assert " tcp://127.0.0.1:" in cmd and "--tls" not in cmd and "--host $QOSLAB_WORKER_HOST" in cmd
    # no way to make certificates: refused, naming both ways out; contradictory flags too
    bare = tmp_path / "bin"
    bare.mkdir()
    p = _print_script(store, "--scheduler-host", "127.0.0.1", env={**os.environ, "PATH": str(bare)})
    line = one_line_error(p)
    assert "openssl is not on the PATH" in line and "--tls-dir DIR" in line and "--insecure" in line, line
    p = _print_script(store, "--insecure", "--tls-dir", str(tmp_path))
    assert "--insecure and --tls-dir contradict" in one_line_error(p)
    p = subprocess.run(
        [QOSLAB, "sweep", S1, "--store", str(store), "--insecure"], capture_output=True, text=True, timeout=60
    )
    assert "--insecure needs --executor slurm or pbs" in one_line_error(p)


def test_the_sweeps_certificates_authenticate_both_ends(tmp_path):
    """The certificates made for a sweep: a CA whose key is gone once it signed the one
    certificate, a key readable by its owner only, and a mutual-TLS cluster that computes
    with them; a client holding another sweep's certificate is refused."""
    from qoslab.runs.executors import dask_security
    from qoslab.runs.worker_tls import make_certificates

    d = make_certificates(tmp_path)
    assert sorted(f.name for f in d.iterdir()) == ["ca.pem", "cert.pem", "key.pem"]
    assert d.stat().st_mode & 0o777 == 0o700 and (d / "key.pem").stat().st_mode & 0o777 == 0o600
    v = subprocess.run(["openssl", "verify", "-CAfile", d / "ca.pem", d / "cert.pem"], capture_output=True)
    assert v.returncode == 0 and v.stdout.strip().endswith(b": OK"), v
    sec = dask_security(d)
    cluster = distributed.LocalCluster(
        n_workers=1,
        processes=False,
        host="127.0.0.1",
        protocol="tls://",
        security=sec,
        dashboard_address=None,
    )
    try:
        with distributed.Client(cluster.scheduler_address, security=sec, timeout=20) as c:
            assert c.submit(sum, [1, 2]).result(timeout=30) == 3
        other = dask_security(make_certificates(tmp_path))
        with pytest.raises((OSError, TimeoutError)):
            distributed.Client(cluster.scheduler_address, security=other, timeout=5)
    finally:
        cluster.close()
