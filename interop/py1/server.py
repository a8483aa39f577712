"""A small server on the official Python SDK 1.x (FastMCP over stdio), which speaks only the
2025 protocol (sessions opened with `initialize`). interop/ts/gateway-clients.mjs and
interop/py/test_gateway.py mount it behind `wharf gateway`, beside the TypeScript
server-everything, to check what the gateway carries between it and the clients: `ask_name`
asks the client for a name (elicitation), `slow` reports progress and logs at each step, and
`cancellations` says how many calls of `slow` were cancelled before they finished.

Run with `.venv/bin/python server.py` (stdio); arguments are ignored.
"""

import asyncio

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel

mcp = FastMCP("py1-interop")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


class Name(BaseModel):
    name: str


@mcp.tool()
async def ask_name(ctx: Context) -> str:
    """Asks the client (elicitation) for a name and greets it."""
    answer = await ctx.elicit("What is your name?", Name)
    if answer.action != "accept":
        return f"No name ({answer.action})"
    return f"Hello, {answer.data.name}"


# How many calls of `slow` were cancelled (by `notifications/cancelled`) before they finished.
cancelled_calls = 0


@mcp.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Reports progress at each of `steps` steps, about 50 ms apart, and logs each at info."""
    global cancelled_calls
    try:
        for step in range(1, steps + 1):
            await asyncio.sleep(0.05)
            await ctx.info(f"step {step} of {steps}")
            await ctx.report_progress(step, steps, f"step {step}")
    except asyncio.CancelledError:
        cancelled_calls += 1
        raise
    return f"Done {steps} steps"


@mcp.tool()
def cancellations() -> int:
    """How many calls of `slow` this server has seen cancelled."""
    return cancelled_calls


@mcp.prompt()
def greeting(name: str) -> str:
    """A prompt that greets someone by name."""
    return f"Please greet {name} warmly."


if __name__ == "__main__":
    mcp.run("stdio")
