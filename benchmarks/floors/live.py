"""The floor of `wbmigrate plan` and `apply` on a live project: every page of the listings the
job needs, on as many connections as wbmigrate uses, each answer and each spec parsed; for
`apply`, then batches of `jobs` changed objects: one batched read per batch and one write per
object, the next batch's read in flight beside this batch's writes. Nothing else.

`python live.py JOB.json`; the job (written by benchmarks/live.py) holds the host, the key,
wbmigrate's own query texts and page sizes, and, for `apply`, a file of the batches' requests
(what wbmigrate reads and writes, found before timing).
"""

import json
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from queue import Queue
from typing import Any

import requests

Job = dict[str, Any]
Post = Callable[..., dict[str, Any]]
Task = tuple[Any, ...]  # (function, arguments...): the function returns the tasks that follow


def main(path: str) -> None:
    with open(path, encoding="utf-8") as file:
        job = json.load(file)
    read(job)
    if job["batches"]:
        with open(job["batches"], encoding="utf-8") as batches:
            write(job, json.load(batches))


def read(job: Job) -> None:
    """Every listing, each page asked for as soon as the one before it has arrived; the keys
    of each page of runs as soon as that page has arrived."""
    tasks: Queue[Task | None] = Queue()
    for view_type in job["view_types"]:
        tasks.put((views, view_type, None))
    tasks.put((triggers,))
    tasks.put((runs, None, 0))
    work(job, tasks, job["connections"])


def views(job: Job, post: Post, view_type: str, after: str | None) -> list[Task]:
    variables = {"viewType": view_type, "first": job["page"], "after": after}
    page = post(job["queries"]["views"], variables)["project"]["allViews"]
    for edge in page["edges"]:
        json.loads(edge["node"]["spec"])
    if page["pageInfo"]["hasNextPage"]:
        return [(views, view_type, page["pageInfo"]["endCursor"])]
    return []


def triggers(job: Job, post: Post) -> list[Task]:
    """The server's features first: which parts of the listing it may be asked for (as
    wandb asks them before it reads automations)."""
    post(job["queries"]["features"], {})
    post(job["queries"]["triggers"], {})
    return []


def runs(job: Job, post: Post, after: str | None, listed: int) -> list[Task]:
    first = min(job["runs_page"], job["runs_cap"] - listed)
    found = post(job["queries"]["runs"], {"first": first, "after": after})["project"]["runs"]
    names = [edge["node"]["name"] for edge in found["edges"]]
    batch = job["keys_batch"]
    more: list[Task] = [(keys, names[i : i + batch]) for i in range(0, len(names), batch)]
    listed += len(names)
    if found["pageInfo"]["hasNextPage"] and listed < job["runs_cap"]:
        more.append((runs, found["pageInfo"]["endCursor"], listed))
    return more


def keys(job: Job, post: Post, names: list[str]) -> list[Task]:
    filters = json.dumps({"name": {"$in": names}})
    post(job["queries"]["keys"], {"filters": filters, "first": len(names)})
    return []


def write(job: Job, batches: list[dict[str, list[Any]]]) -> None:
    """Each batch's writes sent once its read is answered, beside the next batch's read."""
    local = threading.local()

    def send(body: Any) -> None:
        if not hasattr(local, "post"):
            session = requests.Session()
            session.auth = ("api", job["api_key"])
            local.post = poster(job, session)
        local.post(None, None, json.dumps(body))

    with ThreadPoolExecutor(max_workers=job["jobs"] + 2) as pool:

        def sent(bodies: list[Any]) -> list[Future[None]]:
            return [pool.submit(send, body) for body in bodies]

        reading = sent(batches[0]["reads"]) if batches else []
        for n, batch in enumerate(batches):
            _ = [future.result() for future in reading]
            writing = sent(batch["writes"])
            reading = sent(batches[n + 1]["reads"]) if n + 1 < len(batches) else []
            _ = [future.result() for future in writing]


def work(job: Job, tasks: "Queue[Task | None]", threads: int) -> None:
    """Run `tasks` (and the tasks they return) on `threads` threads, one connection each."""
    failures: list[Exception] = []

    def worker() -> None:
        session = requests.Session()
        session.auth = ("api", job["api_key"])
        post = poster(job, session)
        while (task := tasks.get()) is not None:
            try:
                for more in task[0](job, post, *task[1:]):
                    tasks.put(more)
            except Exception as exc:  # raised once every task has ended
                failures.append(exc)
            finally:
                tasks.task_done()

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
    for thread in pool:
        thread.start()
    tasks.join()
    for _ in pool:
        tasks.put(None)
    if failures:
        raise failures[0]


def poster(job: Job, session: requests.Session) -> Post:
    url = job["url"] + "/graphql"
    project = {"entity": job["entity"], "project": job["project"]}
    headers = {"Content-Type": "application/json"}

    def post(query: str | None, variables: dict[str, Any] | None, body: str | bytes = "") -> Any:
        if not body:
            body = json.dumps({"query": query, "variables": {**project, **(variables or {})}})
        answer = session.post(url, data=body, headers=headers, timeout=60).json()
        if answer.get("errors") or not answer.get("data"):
            raise RuntimeError(str(answer)[:300])
        return answer["data"]

    return post


if __name__ == "__main__":
    main(sys.argv[1])
