"""Drives `wharf replay` of the sessions interop/ts/record-session.mjs recorded (the official
TypeScript SDK clients against `wharf serve`, over stdio and over Streamable HTTP) with the
official Python SDK client, over the transport each was recorded on, and checks it gets what the
TypeScript client got: the tools, `echo`, `countdown` with its progress, `greet_interactively`
(its elicitation answered again: a question in the 2025 session, an input round in 2026-07-28)
and `config://app`.

    python replay_cassettes.py DIR    (exit status 0 when both eras match)
"""

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import mcp
from mcp import types
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).resolve().parent
WHARF = os.environ.get("WHARF_BIN", str(HERE / "../../target/debug/wharf"))


def text(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


async def elicit(context, params):
    return types.ElicitResult(action="accept", content={"name": "Ada"})


@contextlib.contextmanager
def replayed_over_http(cassette):
    """`wharf replay CASSETTE --http 127.0.0.1:0` while in the block: yields its URL, read from
    its stderr (10 s at most); killed at the end whatever happened."""
    process = subprocess.Popen([WHARF, "replay", cassette, "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        banner = ""
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line:
                break
            banner += line
            found = re.search(r"at (http://127\.0\.0\.1:\d+/mcp) \(Streamable HTTP\)", line)
            if found:
                yield found.group(1)
                return
        raise AssertionError(f"no URL from wharf replay --http: {banner}")
    finally:
        process.kill()
        process.wait(timeout=10)


async def replay(directory, era, mode):
    cassette = str(Path(directory) / f"session-{era}.cassette")
    expected = json.loads((Path(directory) / f"session-{era}.results.json").read_text())
    if era.startswith("http-"):
        with replayed_over_http(cassette) as url:
            await replay_to(streamable_http_client(url), era, mode, expected)
    else:
        await replay_to(mcp.StdioServerParameters(command=WHARF, args=["replay", cassette]), era, mode, expected)


async def replay_to(server, era, mode, expected):
    progress = []

    async def on_progress(value, total, message):
        progress.append(value)

    async with mcp.Client(server, mode=mode, elicitation_callback=elicit) as client:
        got = {
            "tools": [tool.name for tool in (await client.list_tools()).tools],
            "echo": text(await client.call_tool("echo", {"message": "recorded"})),
            "countdown": text(await client.call_tool("countdown", {"steps": 3}, progress_callback=on_progress)),
            "progress": None,
            "greeting": text(await client.call_tool("greet_interactively", {})),
            "config": (await client.read_resource("config://app")).contents[0].text,
        }
    await asyncio.sleep(0.05)
    got["progress"] = progress
    if got != expected:
        raise AssertionError(f"{era}: the replay differs\n  got      {got}\n  expected {expected}")
    print(f"replayed {era} with the Python SDK: the same as the TypeScript SDK got ({len(progress)} progress notifications)")


async def main(directory):
    await replay(directory, "2025", "legacy")
    await replay(directory, "2026", "2026-07-28")
    await replay(directory, "http-2025", "legacy")
    await replay(directory, "http-2026", "2026-07-28")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
