"""py-reference: a reference server for wharf's client tests, written with the official Python
SDK's high-level `MCPServer` API (mcp 2.3.0), so that wharf's client and `wharf check` are tried
against a server that is not wharf's own.

    python server.py              stdio
    python server.py --http PORT  Streamable HTTP on http://127.0.0.1:PORT/mcp (the SDK's default path)

Both transports serve both protocol eras, the SDK's default: the initialize handshake at
2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25, and the stateless 2026-07-28 revision
(`server/discover`, per-request `_meta` envelope). Over HTTP 2025 clients get stateful sessions
(`Mcp-Session-Id`); 2026-07-28 requests, told apart by their `MCP-Protocol-Version` header, are
served statelessly.
"""

import argparse
import contextlib
import signal
import warnings
from typing import Annotated

import anyio
from pydantic import BaseModel

from mcp.server.mcpserver import AcceptedElicitation, Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPDeprecationWarning

# ctx.info() (logging) is deprecated as of 2026-07-28; slow_count exercises it deliberately.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

mcp = MCPServer("py-reference", version="1.0.0", instructions="A reference server for wharf's client tests.")


@mcp.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@mcp.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return message


@mcp.tool()
async def slow_count(ctx: Context, steps: int = 3) -> str:
    """Count to `steps`, 50 ms a step, reporting progress and logging each step."""
    for step in range(1, steps + 1):
        await anyio.sleep(0.05)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
        await ctx.info(f"slow_count: step {step} of {steps}")
    return f"counted to {steps}"


class Name(BaseModel):
    name: str


def ask_for_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@mcp.tool()
def ask_name(answer: Annotated[ElicitationResult[Name], Resolve(ask_for_name)]) -> str:
    """Ask the user's name by elicitation: a mid-call `elicitation/create` request on 2025
    revisions, an `InputRequiredResult` round trip on 2026-07-28 (the SDK picks)."""
    return f"Hello, {answer.data.name}" if isinstance(answer, AcceptedElicitation) else "declined"


@mcp.tool()
def fail() -> str:
    """Always fails: the result is a tool error (isError: true), not a protocol error."""
    raise ToolError("fail always fails")


@mcp.prompt()
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Please greet {name} warmly."


@mcp.resource("ref://readme", name="readme", mime_type="text/plain")
def readme() -> str:
    """What this server is."""
    return "py-reference: a reference MCP server for wharf's client tests."


@mcp.resource("ref://items/{id}", name="item", mime_type="text/plain")
def item(id: str) -> str:
    """One item, by id."""
    return f"item {id}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT/mcp")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM stops the server as Ctrl-C does
    with contextlib.suppress(KeyboardInterrupt):
        if args.http is None:
            mcp.run()  # returns when stdin closes
        else:
            mcp.run("streamable-http", host="127.0.0.1", port=args.http, streamable_http_path="/mcp")
