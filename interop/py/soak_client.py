"""A steady load for `scripts/soak`: the official Python SDK client, in 2025 sessions and in
2026-07-28 stateless requests by turns, against URL for SECONDS. Each round opens a client, lists
the tools, calls `echo` with a message of its own, counts down with progress, asks for input
(`greet_interactively`: an elicitation in a 2025 session, an input round with `requestState` in
2026-07-28), and closes. Beside the rounds, 2026-07-28 tasks (the tasks extension, in raw HTTP:
the SDK has no client for it) count down one after another, each polled until it ends. Every
answer that comes must be the right one (the message echoed, the countdown's text and progress
in order, the name greeted, a task's result); a round may fail as a whole (the instance it was
on was killed, a Redis failover was under way), and is counted; a task may fail only as a task
whose instance stopped does. Writes a JSON summary to OUT.

    python soak_client.py URL SECONDS OUT
"""

import asyncio
import json
import sys
import time

import httpx2
import mcp
from mcp import types
from mcp.client.streamable_http import streamable_http_client


def text(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


class WrongAnswer(Exception):
    """An answer that came and was not the one asked for: never allowed."""


async def one_round(url, n, mode, step):
    name = f"Soak {n}"

    async def elicit(context, params):
        return types.ElicitResult(action="accept", content={"name": name})

    step[0] = "connect"
    async with mcp.Client(streamable_http_client(url), mode=mode, elicitation_callback=elicit) as client:
        step[0] = "list_tools"
        tools = await client.list_tools()
        if "echo" not in [tool.name for tool in tools.tools]:
            raise WrongAnswer(f"round {n}: no echo in the tool list")
        message = f"soak round {n}"
        step[0] = "echo"
        echoed = text(await client.call_tool("echo", {"message": message}))
        if echoed != message:
            raise WrongAnswer(f"round {n}: echo answered {echoed!r} to {message!r}")
        progress = []

        async def on_progress(value, total, message):
            progress.append(value)

        step[0] = "countdown"
        counted = text(await client.call_tool("countdown", {"steps": 3}, progress_callback=on_progress))
        if counted != "Counted down 3 steps":
            raise WrongAnswer(f"round {n}: countdown answered {counted!r}")
        if progress != sorted(progress) or len(set(progress)) != len(progress):
            raise WrongAnswer(f"round {n}: progress out of order or repeated: {progress}")
        step[0] = "greet_interactively"
        greeted = text(await client.call_tool("greet_interactively", {}))
        if greeted != f"Hello, {name}!":
            raise WrongAnswer(f"round {n}: greet_interactively answered {greeted!r} to {name!r}")
        step[0] = "close"
        return len(progress)


TASKS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
}


async def modern(http, url, method, name, params):
    """A 2026-07-28 request from a client that takes part in tasks; its result (or raises)."""
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        "mcp-name": name,
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": TASKS_META}}
    reply = await http.post(url, json=body, headers=headers)
    reply.raise_for_status()
    answer = reply.json()
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error'].get('message')}")
    return answer["result"]


async def one_task(http, url, n):
    """Starts a countdown task and polls it until it ends: 'completed' (its result checked) or
    'failed' (only as a task whose instance stopped fails). Raises when it cannot be followed."""
    steps = 20
    created = await modern(http, url, "tools/call", "countdown", {"name": "countdown", "arguments": {"steps": steps}})
    if created.get("resultType") != "task":
        raise WrongAnswer(f"task {n}: not a task: {created}")
    task_id = created["taskId"]
    while True:
        await asyncio.sleep(0.2)
        try:
            got = await modern(http, url, "tasks/get", task_id, {"taskId": task_id})
        except (RuntimeError, httpx2.HTTPError) as refused:
            # Told to try again (an instance killed under the poll, Redis failing over): the
            # client polls on, as one would.
            if "no task" in str(refused):
                raise WrongAnswer(f"task {n}: {task_id} unknown after it was created: {refused}")
            continue
        if got.get("taskId") not in (None, task_id):
            raise WrongAnswer(f"task {n}: tasks/get of {task_id} answered for {got.get('taskId')}")
        status = got.get("status")
        if status == "completed":
            result = text(types.CallToolResult.model_validate(got["result"]))
            if result != f"Counted down {steps} steps":
                raise WrongAnswer(f"task {n}: completed with {result!r}")
            return "completed"
        if status == "failed":
            message = (got.get("error") or {}).get("message", "") or got.get("statusMessage", "")
            if "stopped" not in message:
                raise WrongAnswer(f"task {n}: failed without its instance stopping: {got}")
            return "failed: its instance stopped"
        if status not in ("working", "input_required"):
            raise WrongAnswer(f"task {n}: status {status!r}: {got}")


async def tasks(url, deadline, summary):
    async with httpx2.AsyncClient(timeout=30) as http:
        n = 0
        while time.monotonic() < deadline:
            n += 1
            summary["tasks"]["started"] += 1
            try:
                ended = await asyncio.wait_for(one_task(http, url, n), 60)
                summary["tasks"][ended] = summary["tasks"].get(ended, 0) + 1
            except WrongAnswer as wrong:
                summary["wrong"].append(str(wrong))
            except Exception as failed:  # a task that could not be started or followed
                kind = f"{type(failed).__name__}: {str(failed)[:120]}"
                summary["tasks"]["cut short"][kind] = summary["tasks"]["cut short"].get(kind, 0) + 1
                await asyncio.sleep(0.2)


async def main(url, seconds, out):
    deadline = time.monotonic() + seconds
    summary = {"rounds": 0, "ok": 0, "failed": 0, "progress": 0, "failures": {}, "wrong": [],
               "tasks": {"started": 0, "cut short": {}}}
    tasking = asyncio.create_task(tasks(url, deadline, summary))
    n = 0
    while time.monotonic() < deadline:
        n += 1
        mode = "legacy" if n % 2 else "auto"
        summary["rounds"] += 1
        step = ["start"]
        try:
            # Longer than the server waits for a client's answer (60 s), so that a request
            # the server gives up on is seen with the server's error.
            summary["progress"] += await asyncio.wait_for(one_round(url, n, mode, step), 90)
            summary["ok"] += 1
        except WrongAnswer as wrong:
            summary["wrong"].append(str(wrong))
        except Exception as failed:  # a round cut short: counted, with its kind
            # The SDK's task groups may wrap what the round raised.
            wrong = failed.subgroup(WrongAnswer) if isinstance(failed, BaseExceptionGroup) else None
            if wrong is not None:
                summary["wrong"].extend(str(error) for error in wrong.exceptions)
                continue
            summary["failed"] += 1
            while isinstance(failed, BaseExceptionGroup) and len(failed.exceptions) == 1:
                failed = failed.exceptions[0]
            kind = f"{type(failed).__name__} in {mode} {step[0]}: {str(failed)[:120]}"
            summary["failures"][kind] = summary["failures"].get(kind, 0) + 1
            print(f"{time.strftime('%H:%M:%S')} round {n} cut short: {kind}", flush=True)
            await asyncio.sleep(0.2)
    await tasking
    with open(out, "w") as file:
        json.dump(summary, file, indent=2)
    print(f"python-sdk soak: {summary['ok']} rounds ok, {summary['failed']} cut short, {len(summary['wrong'])} wrong")
    return 1 if summary["wrong"] else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], float(sys.argv[2]), sys.argv[3])))
