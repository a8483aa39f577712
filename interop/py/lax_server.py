"""lax-reference: a server written with the official Python SDK's low-level `Server` API, whose
tools each ignore exactly one constraint of their own input schema, for `wharf check`'s tests:
each tool checks its arguments against its schema with that one keyword taken out, so the check
must find that keyword, and only it. `strict` ignores nothing.

    python lax_server.py    stdio
"""

import copy

import anyio
import jsonschema
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

# Each tool: its schema, and the one keyword (at a property) it does not enforce.
TOOLS = {
    "paint": (
        {"type": "object", "required": ["color"], "additionalProperties": False,
         "properties": {"color": {"type": "string", "enum": ["red", "green"]}}},
        ("color", "enum"),
    ),
    "set_volume": (
        {"type": "object", "required": ["level"],
         "properties": {"level": {"type": "integer", "minimum": 0, "maximum": 10}}},
        ("level", "maximum"),
    ),
    "tag": (
        {"type": "object", "required": ["name"],
         "properties": {"name": {"type": "string", "pattern": "^[a-z]{2,8}$"}}},
        ("name", "pattern"),
    ),
    "strict": (
        {"type": "object", "required": ["count"], "additionalProperties": False,
         "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 5}}},
        None,
    ),
}


def enforced(schema, ignored):
    """The schema the tool really checks: `ignored` (a property and a keyword) taken out."""
    schema = copy.deepcopy(schema)
    if ignored:
        prop, keyword = ignored
        schema["properties"][prop].pop(keyword, None)
    return schema


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[
        types.Tool(name=name, description=f"{name}, ignoring {ignored[1] if ignored else 'nothing'}", input_schema=schema)
        for name, (schema, ignored) in TOOLS.items()
    ])


async def call_tool(ctx, params):
    schema, ignored = TOOLS[params.name]
    arguments = params.arguments or {}
    try:
        jsonschema.validate(arguments, enforced(schema, ignored))
    except jsonschema.ValidationError as err:
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"refused: {err.message}")], is_error=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"ran with {arguments}")])


server = Server("lax-reference", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
