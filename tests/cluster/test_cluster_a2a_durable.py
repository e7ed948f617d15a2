"""The A2A app over a ``ClusterRuntime`` answers a durable agent's task only once its run is in
the shared store (as over a ``Runtime``): a task a client was told about outlives the hosts,
and its id is its run's.

A two-node Ray cluster with two session hosts on PostgreSQL; the app is served by uvicorn in
this process. The fault: the session's host is paused (SIGSTOP) when the message arrives, so it
cannot store the run, and is killed (SIGKILL) once the front has sent it the run (a spy on
the front's handle of that host tells when).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _a2a_client import a2a_ended

from praxo_actors.cluster import ClusterRuntime
from praxo_actors.memory import PostgresStore
from praxo_actors.memory._log import SessionLog
from praxo_actors.testing._served import served

ray = pytest.importorskip("ray")
pytest.importorskip("a2a")
pytestmark = pytest.mark.timeout(900)

TIMEOUT = 120.0  # a busy machine (see test_cluster.py)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """Two Ray nodes (the folder's default is three)."""
    from praxo_actors.testing._ray import local_ray_cluster

    with local_ray_cluster(nodes=2, path=[str(Path(__file__).parent)]) as cluster:
        yield cluster


@pytest.fixture
def cluster(ray_cluster: Any, cluster_store: Any) -> Iterator[ClusterRuntime]:
    dsn, schema = cluster_store
    cluster = ClusterRuntime.start(dsn, hosts=2, schema=schema, idle_timeout=None, timeout=TIMEOUT)
    try:
        cluster.register_agent("default", "cluster_agents:echo", durable=True)
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def log(cluster_store: Any) -> Iterator[SessionLog]:
    """The shared store's session log, read from this process."""
    dsn, schema = cluster_store
    store = PostgresStore(dsn, schema=schema)
    try:
        yield SessionLog(store)
    finally:
        store.close()


def send(url: str, context_id: str, text: str) -> dict[str, Any]:
    """SendMessage, answered at once; return the task."""
    parts = [{"text": text}]
    message = {"messageId": text, "contextId": context_id, "role": "ROLE_USER", "parts": parts}
    params = {"message": message, "configuration": {"returnImmediately": True}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    reply = httpx.post(url + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=TIMEOUT)
    task: dict[str, Any] = reply.json()["result"]["task"]
    return task


class _Asked:
    """A host's handle that tells when the front sent it a run (``run`` or ``submit``)."""

    def __init__(self, host: Any) -> None:
        self._host = host
        self.asked = threading.Event()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._host, name)
        if name not in ("run", "submit"):
            return method
        asked = self.asked

        class _Method:
            def remote(self, *args: Any, **kwargs: Any) -> Any:
                ref = method.remote(*args, **kwargs)
                asked.set()
                return ref

        return _Method()


@contextlib.contextmanager
def paused_then_killed(cluster: ClusterRuntime, host: str) -> Iterator[threading.Event]:
    """Pause ``host`` (SIGSTOP); yield an event set once the front sends it a run; kill it
    (SIGKILL: Ray restarts it) when the block ends."""
    pid = ray.get(
        cluster._hosts[host].__ray_call__.remote(lambda _host: os.getpid()), timeout=TIMEOUT
    )
    handle = cluster._hosts[host]
    spy = _Asked(handle)
    cluster._hosts[host] = spy
    os.kill(pid, signal.SIGSTOP)
    try:
        yield spy.asked
    finally:
        os.kill(pid, signal.SIGKILL)
        cluster._hosts[host] = handle


def test_a_durable_task_is_answered_only_once_its_run_is_stored(
    cluster: ClusterRuntime, log: SessionLog
) -> None:
    from praxo_actors.protocols import a2a_app

    with served(a2a_app(cluster), lifespan="on", stop_timeout=30.0) as url:
        # The session's host cannot store the run: a task answered as accepted must be stored
        # by then; one whose host died first is answered failed, with its code.
        host = cluster.host_of("ctx-cut")
        answers: list[tuple[dict[str, Any], str | None]] = []

        def client() -> None:
            task = send(url, "ctx-cut", "cut")
            answers.append((task, log.find_run(task["id"])))  # read as it is answered

        with paused_then_killed(cluster, host) as asked:
            sender = threading.Thread(target=client, name="a2a-client")
            sender.start()
            assert asked.wait(TIMEOUT), "the front never sent the run to the session's host"
        sender.join(TIMEOUT)
        assert not sender.is_alive()
        [(task, stored_in)] = answers
        state = task["status"]["state"]
        if state == "TASK_STATE_FAILED":
            assert task["status"]["message"]["metadata"]["praxo.code"] == "SESSION_CRASHED"
        else:
            assert stored_in == "ctx-cut", f"task {task['id']} ({state}) answered, not stored"

        # The session serves again (its host restarted, or the other one): the task's id is
        # its run's, which is in the store when the task is answered, and completes.
        task = send(url, "ctx-cut", "again")
        assert log.find_run(task["id"]) == "ctx-cut"
        done = a2a_ended(url, task["id"])
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        assert done["metadata"]["praxo.run_id"] == task["id"]
        assert done["artifacts"][0]["parts"][0]["text"] == "echo: again"
        result = cluster.result(task["id"], timeout=TIMEOUT)
        assert (result.run_id, result.output) == (task["id"], "echo: again")
