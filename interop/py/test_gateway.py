"""Drives `wharf gateway` over stdio with the official Python SDK client (2.x), the gateway
mounting two servers written by others side by side: the reference server-everything (npm
`@modelcontextprotocol/server-everything`, in interop/ts/node_modules) under `everything_`, and
a FastMCP server on the Python SDK 1.x (interop/py1/server.py, which speaks only the 2025
protocol) under `py_`. In a 2025 session (mode="legacy") what an upstream asks during a tool call
(elicitation, sampling, roots) reaches the client as a request; in the 2026-07-28 era
(mode="auto", which discovers it) it comes back as `input_required` rounds, which the SDK answers
with the same callbacks. Progress, log messages and cancellation cross the gateway too. Every
process started (the gateway and its upstreams) carries the temporary directory in its command
line, and each test checks that none is left once its client has closed.

Needs `npm ci` in interop/ts and interop/py1/.venv (see scripts/test). Run with
`python test_gateway.py` (exit status 0 when all pass); WHARF_BIN names the wharf binary.
"""

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import warnings
from pathlib import Path

import mcp
from mcp import types
from mcp.client.stdio import stdio_client

HERE = Path(__file__).resolve().parent
WHARF = os.environ.get("WHARF_BIN", str(HERE / "../../target/debug/wharf"))
EVERYTHING = HERE / "../ts/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
PY1 = HERE / "../py1"
PYTHON1 = PY1 / ".venv/bin/python"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
# The Python SDK 1.x's account of why it refused `server/discover` (the gateway's probe for the
# 2026-07-28 revision): 30 lines for each field of each request type, left out of the log shown.
NOISE = re.compile(r"server_stderr: +(\S+(Request|Notification)\.|Input should|Field required|For further information)")

DIR = None
CONFIG = None


def setUpModule():
    global DIR, CONFIG
    node = shutil.which("node")
    assert node, "node is not on PATH"
    assert EVERYTHING.exists(), f"{EVERYTHING} is missing: npm ci in interop/ts"
    assert PYTHON1.exists(), f"{PYTHON1} is missing: python3 -m venv interop/py1/.venv and pip install"
    DIR = tempfile.mkdtemp(prefix="wharf-gateway-interop-")
    CONFIG = Path(DIR) / "gateway.toml"
    # The last argument of each command is ignored by the server; it marks the process as this
    # file's, for the check that nothing is left running.
    marker = f"--marker={DIR}"

    def command(*items):
        return "[" + ", ".join(json.dumps(str(item)) for item in items) + "]"

    CONFIG.write_text(
        "[[mount]]\n"
        'name = "everything"\n'
        f'command = {command(node, EVERYTHING.resolve(), "stdio", marker)}\n'
        'namespace = "everything"\n'
        "\n"
        "[[mount]]\n"
        'name = "py"\n'
        f"command = {command(PYTHON1.absolute(), (PY1 / 'server.py').resolve(), marker)}\n"
        'namespace = "py"\n'
    )


def tearDownModule():
    if DIR:
        shutil.rmtree(DIR, ignore_errors=True)


def left_running():
    """The processes whose command line names the temporary directory, as `pgrep -a` lists them."""
    found = subprocess.run(["pgrep", "-a", "-f", DIR], capture_output=True, text=True)
    return found.stdout.strip()


def text(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


class Questions:
    """The client's answers to what the upstreams ask, and a record of each question."""

    def __init__(self):
        self.elicitation = []
        self.sampling = []
        self.roots = 0

    async def elicit(self, context, params):
        self.elicitation.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(self, context, params):
        self.sampling.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Short."),
            model="test-model",
            stopReason="endTurn",
        )

    async def list_roots(self, context):
        self.roots += 1
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/ada", name="ada")])


class GatewayCase(unittest.IsolatedAsyncioTestCase):
    mode = None

    async def run_client(self, body, **callbacks):
        """Runs `body(client, questions)` with a client of `mode` connected to a fresh gateway
        over stdio; then the gateway and both upstreams must be gone within 10 s. The gateway's
        stderr is shown if anything failed."""
        questions = Questions()
        log_path = Path(DIR) / f"gateway-{self.mode}.log"
        with open(log_path, "w") as log:
            params = mcp.StdioServerParameters(command=WHARF, args=["gateway", str(CONFIG)])
            try:
                async with mcp.Client(
                    stdio_client(params, errlog=log),
                    mode=self.mode,
                    elicitation_callback=questions.elicit,
                    sampling_callback=questions.sample,
                    list_roots_callback=questions.list_roots,
                    **callbacks,
                ) as client:
                    self.assertEqual(client.server_info.name, "wharf-gateway")
                    await body(client, questions)
                    running = left_running()
                    for part in ("gateway", "server-everything", "server.py"):
                        self.assertIn(part, running)
                    closing = time.monotonic()
                # The SDK ends the gateway's stdin and waits 2 s before it kills the process tree.
                closed = time.monotonic() - closing
            except BaseException:
                log.flush()
                lines = [line for line in log_path.read_text().splitlines() if not NOISE.search(line)]
                print("--- the gateway's stderr:", *lines[-300:], sep="\n", file=sys.stderr)
                raise
        left = left_running()
        deadline = time.monotonic() + 10
        while left and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            left = left_running()
        for line in left.splitlines():
            try:
                os.kill(int(line.split()[0]), 9)
            except ProcessLookupError:
                pass
        self.assertEqual(left, "", "processes left running 10 s after the client closed")
        self.assertLess(closed, 2, "the gateway did not exit when its stdin closed")

    async def exercise(self, client, questions):
        """What both eras must see through the gateway."""
        names = [tool.name for tool in (await client.list_tools()).tools]
        for name in (
            "py_add",
            "py_ask_name",
            "py_slow",
            "py_cancellations",
            "everything_echo",
            "everything_trigger-sampling-request",
            "everything_trigger-long-running-operation",
        ):
            self.assertIn(name, names)
        self.assertEqual([n for n in names if not n.startswith(("py_", "everything_"))], [])

        added = await client.call_tool("py_add", {"a": 2, "b": 40})
        self.assertEqual(text(added), "42")
        self.assertEqual(added.structured_content, {"result": 42})
        self.assertEqual(text(await client.call_tool("everything_echo", {"message": "hello"})), "Echo: hello")

        prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
        self.assertIn("py_greeting", prompts)
        self.assertIn("everything_simple-prompt", prompts)
        greeting = await client.get_prompt("py_greeting", {"name": "Grace"})
        self.assertIn("greet Grace", greeting.messages[0].content.text)

        # Elicitation: the Python 1.x server asks, the client's callback answers.
        self.assertEqual(text(await client.call_tool("py_ask_name", {})), "Hello, Ada")
        self.assertEqual(questions.elicitation[-1].message, "What is your name?")

        # Sampling: server-everything asks the client's model.
        sampling = {"prompt": "Say hi", "maxTokens": 20}
        sampled = text(await client.call_tool("everything_trigger-sampling-request", sampling))
        self.assertIn('"text": "Short."', sampled)
        self.assertIn('"model": "test-model"', sampled)
        asked = questions.sampling[-1]
        self.assertEqual(asked.messages[0].content.text, "Resource trigger-sampling-request context: Say hi")
        self.assertEqual(asked.max_tokens, 20)

        # Roots: server-everything asks for the client's roots during the call.
        roots = text(await client.call_tool("everything_get-roots-list", {}))
        self.assertIn("Current MCP Roots (1 total)", roots)
        self.assertIn("URI: file:///tmp/ada", roots)
        self.assertGreaterEqual(questions.roots, 1)

        # Progress from each upstream.
        progress = []

        async def on_progress(value, total, message):
            progress.append((value, total, message))

        slow = await client.call_tool("py_slow", {"steps": 4}, progress_callback=on_progress)
        self.assertEqual(text(slow), "Done 4 steps")
        self.assertEqual(progress[:3], [(1, 4, "step 1"), (2, 4, "step 2"), (3, 4, "step 3")])
        self.assertLessEqual(len(progress), 4)
        progress.clear()
        long = await client.call_tool(
            "everything_trigger-long-running-operation", {"duration": 0.4, "steps": 4}, progress_callback=on_progress
        )
        self.assertIn("Long running operation completed", text(long))
        self.assertEqual([value for value, _, _ in progress[:3]], [1, 2, 3])

        # Cancellation: a long call of py_slow cancelled once it has made progress; the Python
        # server sees it cancelled, and the next calls work.
        progress.clear()
        progressed = asyncio.Event()

        async def on_slow_progress(value, total, message):
            progress.append(value)
            if len(progress) == 2:
                progressed.set()

        started = time.monotonic()
        pending = asyncio.create_task(client.call_tool("py_slow", {"steps": 400}, progress_callback=on_slow_progress))
        await asyncio.wait_for(progressed.wait(), 10)
        pending.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await pending
        self.assertLess(time.monotonic() - started, 10)
        self.assertEqual(text(await client.call_tool("py_add", {"a": 1, "b": 1})), "2")
        cancelled, deadline = "0", time.monotonic() + 5
        while cancelled == "0" and time.monotonic() < deadline:
            cancelled = text(await client.call_tool("py_cancellations", {}))
            await asyncio.sleep(0.1)
        self.assertEqual(cancelled, "1", "the Python server saw its call of slow cancelled")
        self.assertEqual(text(await client.call_tool("everything_echo", {"message": "after"})), "Echo: after")


class SessionEra(GatewayCase):
    mode = "legacy"

    async def test_a_2025_session_through_the_gateway(self):
        logs = []

        async def on_log(params):
            logs.append((params.level, params.data))

        async def body(client, questions):
            self.assertFalse(client.protocol_version.startswith("2026"))
            await self.exercise(client, questions)
            # py_slow logs each step at info: the messages reach the session's client at the
            # level it set, and not above it (the Python server has no logging/setLevel).
            steps = lambda: [entry for entry in logs if str(entry[1]).startswith("step")]  # noqa: E731
            # (logging/setLevel is deprecated as of 2026-07-28, and the SDK says so.)
            warnings.simplefilter("ignore", mcp.MCPDeprecationWarning)
            await client.set_logging_level("warning")
            logs.clear()
            await client.call_tool("py_slow", {"steps": 2})
            await asyncio.sleep(0.05)
            self.assertEqual(steps(), [])
            await client.set_logging_level("info")
            await client.call_tool("py_slow", {"steps": 2})
            await asyncio.sleep(0.05)
            self.assertEqual(steps(), [("info", "step 1 of 2"), ("info", "step 2 of 2")])

        await self.run_client(body, logging_callback=on_log)


class ModernEra(GatewayCase):
    mode = "auto"

    async def test_auto_mode_discovers_2026_through_the_gateway(self):
        logs = []

        async def on_log(params):
            logs.append((params.level, params.data))

        async def body(client, questions):
            self.assertEqual(client.protocol_version, "2026-07-28")
            await self.exercise(client, questions)
            # Log messages reach a 2026-07-28 client only for a request that asks for them, at
            # the level it names.
            steps = lambda: [entry for entry in logs if str(entry[1]).startswith("step")]  # noqa: E731
            logs.clear()
            await client.call_tool("py_slow", {"steps": 2})
            await client.call_tool("py_slow", {"steps": 2}, meta={LOG_LEVEL: "warning"})
            await asyncio.sleep(0.05)
            self.assertEqual(steps(), [])
            await client.call_tool("py_slow", {"steps": 2}, meta={LOG_LEVEL: "info"})
            await asyncio.sleep(0.05)
            self.assertEqual(steps(), [("info", "step 1 of 2"), ("info", "step 2 of 2")])

            # The rounds by hand: the question comes back as an input_required result, and the
            # retry with its answer and the request state echoed completes the call.
            first = await client.session.call_tool("py_ask_name", {}, allow_input_required=True)
            self.assertEqual(first.result_type, "input_required")
            [(key, question)] = first.input_requests.items()
            self.assertEqual(question.method, "elicitation/create")
            self.assertEqual(question.params.message, "What is your name?")
            answered = await client.call_tool(
                "py_ask_name",
                {},
                input_responses={key: types.ElicitResult(action="accept", content={"name": "Grace"})},
                request_state=first.request_state,
            )
            self.assertEqual(text(answered), "Hello, Grace")

        await self.run_client(body, logging_callback=on_log)


if __name__ == "__main__":
    outcome = unittest.main(verbosity=2, exit=False).result
    failed = len(outcome.failures) + len(outcome.errors)
    print(f"python-sdk through wharf gateway: {outcome.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed or not outcome.testsRun else 0)
