"""A steady load for `scripts/soak`: the official Python SDK client, in 2025 sessions and in
2026-07-28 stateless requests by turns, against URL for SECONDS. Each round opens a client, lists
the tools, calls `echo` with a message of its own, counts down with progress, and closes. Every
answer that comes must be the right one (the message echoed, the countdown's text and progress
in order); a round may fail as a whole (the instance it was on was killed, a Redis failover was
under way), and is counted. Writes a JSON summary to OUT.

    python soak_client.py URL SECONDS OUT
"""

import asyncio
import json
import sys
import time

import mcp
from mcp.client.streamable_http import streamable_http_client


def text(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


class WrongAnswer(Exception):
    """An answer that came and was not the one asked for: never allowed."""


async def one_round(url, n, mode):
    async with mcp.Client(streamable_http_client(url), mode=mode) as client:
        tools = await client.list_tools()
        if "echo" not in [tool.name for tool in tools.tools]:
            raise WrongAnswer(f"round {n}: no echo in the tool list")
        message = f"soak round {n}"
        echoed = text(await client.call_tool("echo", {"message": message}))
        if echoed != message:
            raise WrongAnswer(f"round {n}: echo answered {echoed!r} to {message!r}")
        progress = []

        async def on_progress(value, total, message):
            progress.append(value)

        counted = text(await client.call_tool("countdown", {"steps": 3}, progress_callback=on_progress))
        if counted != "Counted down 3 steps":
            raise WrongAnswer(f"round {n}: countdown answered {counted!r}")
        if progress != sorted(progress) or len(set(progress)) != len(progress):
            raise WrongAnswer(f"round {n}: progress out of order or repeated: {progress}")
        return len(progress)


async def main(url, seconds, out):
    deadline = time.monotonic() + seconds
    summary = {"rounds": 0, "ok": 0, "failed": 0, "progress": 0, "failures": {}, "wrong": []}
    n = 0
    while time.monotonic() < deadline:
        n += 1
        mode = "legacy" if n % 2 else "auto"
        summary["rounds"] += 1
        try:
            summary["progress"] += await asyncio.wait_for(one_round(url, n, mode), 60)
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
            kind = f"{type(failed).__name__}: {str(failed)[:120]}"
            summary["failures"][kind] = summary["failures"].get(kind, 0) + 1
            await asyncio.sleep(0.2)
    with open(out, "w") as file:
        json.dump(summary, file, indent=2)
    print(f"python-sdk soak: {summary['ok']} rounds ok, {summary['failed']} cut short, {len(summary['wrong'])} wrong")
    return 1 if summary["wrong"] else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], float(sys.argv[2]), sys.argv[3])))
