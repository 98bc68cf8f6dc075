"""A Spark standalone cluster on loopback for tests and benchmarks: one master and N workers,
each its own process (and process group, with the executors it starts), all stopped on exit."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Dict, Iterator, List

STARTUP_SECONDS = 120


class ClusterError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def standalone_cluster(
    work: Path, workers: int = 2, cores: int = 1, memory: str = "2g"
) -> Iterator[Dict]:
    """Yields {"url", "env", "work"}: the master URL, and the environment a driver needs."""
    import pyspark

    home = Path(pyspark.__file__).parent
    work.mkdir(parents=True, exist_ok=True)
    port, ui = free_port(), free_port()
    url = f"spark://127.0.0.1:{port}"
    env = dict(
        os.environ,
        SPARK_HOME=str(home),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOCAL_DIRS=str(work / "local"),
        PYSPARK_PYTHON=sys.executable,
    )
    processes: List[subprocess.Popen] = []
    logs: List[Path] = []

    def start(name: str, *args: str) -> None:
        log = work / f"{name}.log"
        logs.append(log)
        with log.open("w") as out:
            processes.append(
                subprocess.Popen(
                    [str(home / "bin" / "spark-class"), *args],
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )

    def state() -> Dict:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as r:
                return json.load(r)
        except OSError:
            return {}

    def wait_for(what: str, ready) -> None:
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if ready():
                return
            if any(p.poll() is not None for p in processes):
                break
            time.sleep(0.5)
        tails = "\n".join(f"--- {p}\n{p.read_text()[-3000:]}" for p in logs if p.exists())
        raise ClusterError(f"{what} did not start in {STARTUP_SECONDS} s\n{tails}")

    try:
        start("master", "org.apache.spark.deploy.master.Master",
              "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui))
        wait_for("the Spark master", lambda: bool(state()))
        for n in range(workers):
            start(f"worker{n}", "org.apache.spark.deploy.worker.Worker", url,
                  "--host", "127.0.0.1", "--cores", str(cores), "--memory", memory,
                  "--webui-port", str(free_port()), "--work-dir", str(work / f"worker{n}"))
        wait_for(f"{workers} Spark workers", lambda: state().get("aliveworkers") == workers)
        yield {"url": url, "env": env, "work": work}
    finally:
        for p in processes:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in processes:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def run_job(cluster: Dict, *args: str, timeout: float = 3600) -> subprocess.CompletedProcess:
    """Runs `python -m simhashdb.spark ARGS` as a driver against the cluster."""
    command = [sys.executable, "-m", "simhashdb.spark", *args, "--master", cluster["url"],
               "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.ui.enabled=false"]
    return subprocess.run(command, env=cluster["env"], capture_output=True, text=True,
                          timeout=timeout, cwd=cluster["work"])


@contextlib.contextmanager
def driver(cluster: Dict):
    """A SparkSession in this process on the cluster, stopped on exit. It takes every core of
    the cluster while it lives: jobs run by `run_job` wait until it is stopped."""
    from pyspark.sql import SparkSession

    for key in ("SPARK_LOCAL_IP", "PYSPARK_PYTHON"):
        os.environ[key] = cluster["env"][key]
    session = (
        SparkSession.builder.master(cluster["url"])
        .appName("simhashdb tests")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.executor.memory", "1g")
        .config("spark.sql.shuffle.partitions", "8")
        # The tests' failing tasks fail on bad input, every time: no retries.
        .config("spark.task.maxFailures", "1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
