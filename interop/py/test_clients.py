"""Drives `wharf serve` over stdio with the official Python SDK, in a 2025 session and with
2026-07-28 stateless requests. With WHARF_MCP_URL set, the client speaks Streamable HTTP to that
URL instead (scripts/test points it at a fleet of instances behind nginx); with WHARF_MCP_UNIX,
to `wharf serve --unix` on that socket, through httpx's `uds` transport. Run with
`python test_clients.py` (exit status 0 when all pass).
"""

import asyncio
import json
import os
import sys
import unittest
from pathlib import Path

import httpx2
import mcp
from mcp import types
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).resolve().parent
WHARF = os.environ.get("WHARF_BIN", str(HERE / "../../target/debug/wharf"))
SERVER = mcp.StdioServerParameters(command=WHARF, args=["serve"])
# The fleet's instances hand out at most 25,000 tokens of a result at once, as Claude Code takes.
BUDGETED = mcp.StdioServerParameters(command=WHARF, args=["serve", "--max-result-tokens", "25000"])
UNIX = os.environ.get("WHARF_MCP_UNIX")
URL = "http://localhost/mcp" if UNIX else os.environ.get("WHARF_MCP_URL")


def over_http():
    """The SDK's Streamable HTTP transport to URL: over the Unix socket UNIX when it is set."""
    if not UNIX:
        return streamable_http_client(URL)
    socket = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=UNIX), timeout=httpx2.Timeout(30, read=300))
    return streamable_http_client(URL, http_client=socket)


def server():
    """What the client connects to: `wharf serve` over stdio, or the HTTP endpoint at URL."""
    return over_http() if URL else SERVER


def text(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


async def elicit(context, params):
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def sample(context, params):
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="Short."),
        model="test-model",
        stopReason="endTurn",
    )


class Common:
    """Checks every era must pass; `client()` makes the client under test."""

    async def exercise(self, client):
        tools = await client.list_tools()
        names = [tool.name for tool in tools.tools]
        self.assertEqual(names, sorted(names))
        self.assertIn("calculator", names)
        self.assertEqual(text(await client.call_tool("echo", {"message": "hello"})), "hello")
        divided = await client.call_tool("calculator", {"operation": "divide", "a": 1, "b": 0})
        self.assertTrue(divided.is_error)
        self.assertEqual(text(divided), "Division by zero")

        progress = []

        async def on_progress(value, total, message):
            progress.append(value)

        counted = await client.call_tool("countdown", {"steps": 3}, progress_callback=on_progress)
        self.assertEqual(text(counted), "Counted down 3 steps")
        self.assertEqual(progress[:2], [1, 2])

        prompt = await client.get_prompt("code_review", {"language": "python", "code": "pass"})
        self.assertIn("python code", prompt.messages[0].content.text)
        config = await client.read_resource("config://app")
        self.assertEqual(json.loads(config.contents[0].text)["name"], "wharf-demo")
        profile = await client.read_resource("users://1/profile")
        self.assertEqual(json.loads(profile.contents[0].text)["name"], "Ada Lovelace")
        completion = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="users://{id}/profile"),
            {"name": "id", "value": "2"},
        )
        self.assertEqual(completion.completion.values, ["2"])

        # MCP Apps: the dice tools name their view, whose page and metadata the client reads.
        roll = next(tool for tool in tools.tools if tool.name == "roll_dice")
        self.assertEqual(roll.meta["ui"], {"resourceUri": "ui://wharf-demo/dice"})
        again = next(tool for tool in tools.tools if tool.name == "roll_again")
        self.assertEqual(again.meta["ui"]["visibility"], ["app"])
        view = await client.read_resource("ui://wharf-demo/dice")
        self.assertEqual(view.contents[0].mime_type, "text/html;profile=mcp-app")
        self.assertIn("ui/initialize", view.contents[0].text)
        self.assertEqual(view.contents[0].meta["ui"], {"prefersBorder": True})
        rolled = await client.call_tool("roll_dice", {"count": 3, "sides": 6})
        self.assertEqual(len(rolled.structured_content["rolls"]), 3)
        self.assertIn("total", text(rolled))


class SessionEra(Common, unittest.IsolatedAsyncioTestCase):
    async def test_a_2025_session_uses_everything(self):
        logs = []

        async def on_log(params):
            logs.append(params.data)

        async with mcp.Client(
            server(),
            mode="legacy",
            elicitation_callback=elicit,
            sampling_callback=sample,
            logging_callback=on_log,
        ) as client:
            self.assertFalse(client.protocol_version.startswith("2026"))
            self.assertEqual(client.server_info.name, "wharf-demo")
            await self.exercise(client)
            await client.set_logging_level("warning")
            logs.clear()  # the countdown above logged at debug before any level was set
            await client.call_tool("log", {"level": "error", "message": "bad"})
            await client.call_tool("log", {"level": "info", "message": "filtered out"})
            await asyncio.sleep(0.05)
            self.assertEqual(logs, ["bad"])
            self.assertEqual(text(await client.call_tool("greet_interactively", {})), "Hello, Ada!")
            summary = await client.call_tool("summarize", {"text": "A long text."})
            self.assertEqual(text(summary), "Summary from test-model: Short.")


class StatelessEra(Common, unittest.IsolatedAsyncioTestCase):
    async def test_auto_mode_discovers_2026_and_serves_statelessly(self):
        async with mcp.Client(server(), mode="auto") as client:
            self.assertEqual(client.protocol_version, "2026-07-28")
            self.assertEqual(client.server_info.name, "wharf-demo")
            await self.exercise(client)


def report(lines):
    """What the demo's `long_report` writes: line i is its number, a space and a sentence."""
    return "".join(f"{i:07d} the quick brown fox jumps over the lazy dog, once more.\n" for i in range(1, lines + 1))


class LargeResults(unittest.IsolatedAsyncioTestCase):
    """A 2 MiB result over a 25,000-token budget: a preview and a `resource_link`, whose pages the
    client reads (each within the budget) and puts together into the original bytes. Over HTTP
    the fleet's round robin reads each page through another instance than the call."""

    async def read_whole(self, client):
        expected = report(32768)
        result = await client.call_tool("long_report", {"lines": 32768})
        links = [block for block in result.content if block.type == "resource_link"]
        self.assertEqual(len(links), 1, result)
        self.assertEqual(links[0].size, len(expected))
        preview = result.content[0].text
        self.assertTrue(expected.startswith(preview.split("\n\n[")[0]), preview[-300:])
        uri = str(links[0].uri)
        self.assertIn(f"{uri}?page=1", preview)
        pages, whole, page = None, [], 1
        while pages is None or page <= pages:
            read = await client.read_resource(f"{uri}?page={page}")
            contents = read.contents[0]
            self.assertLessEqual(len(contents.text.encode()), 25000, "a page holds at most 25,000 tokens")
            whole.append(contents.text)
            pages = contents.meta["wharf/pages"]
            page += 1
        self.assertGreater(pages, 80)
        self.assertEqual("".join(whole), expected, "the pages put together are the original bytes")

    def budgeted(self):
        return over_http() if URL else BUDGETED

    async def test_a_2025_session_reads_a_large_result_in_pages(self):
        async with mcp.Client(self.budgeted(), mode="legacy") as client:
            await self.read_whole(client)

    async def test_2026_requests_read_a_large_result_in_pages(self):
        async with mcp.Client(self.budgeted(), mode="auto") as client:
            self.assertEqual(client.protocol_version, "2026-07-28")
            await self.read_whole(client)


if __name__ == "__main__":
    outcome = unittest.main(verbosity=2, exit=False).result
    failed = len(outcome.failures) + len(outcome.errors)
    print(f"python-sdk: {outcome.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed or not outcome.testsRun else 0)
