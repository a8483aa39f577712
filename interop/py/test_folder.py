"""Drives `wharf serve DIR` (a server made from a folder: examples/folder) with the official
Python SDK, over stdio and over Streamable HTTP, in a 2025 session and in the 2026-07-28
stateless era: the command tools of wharf.toml, the prompts of prompts/*.md, the files of
resources/ and skills/, the Skills extension's methods (sent with the SDK's raw request API),
and a reload of the folder while the client is connected. Each test serves a fresh copy of the
folder, which it edits and deletes. Run with `python test_folder.py` (exit status 0 when all
pass); WHARF_BIN names the wharf binary.
"""

import asyncio
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp
from mcp import types
from pydantic import TypeAdapter

HERE = Path(__file__).resolve().parent
WHARF = os.environ.get("WHARF_BIN", str(HERE / "../../target/debug/wharf"))
EXAMPLE = HERE / "../../examples/folder"
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILL = "skill://release-notes/SKILL.md"
NEW_PROMPT = "---\ndescription: Added while serving\n---\nHello.\n"
RAW = TypeAdapter(dict[str, Any])


@contextmanager
def folder_copy():
    """A fresh copy of examples/folder, deleted afterwards."""
    parent = Path(tempfile.mkdtemp(prefix="wharf-folder-"))
    try:
        folder = parent / "folder"
        shutil.copytree(EXAMPLE, folder)
        yield folder
    finally:
        shutil.rmtree(parent, ignore_errors=True)


@asynccontextmanager
async def http_server(folder):
    """`wharf serve FOLDER --http 127.0.0.1:0`, its URL read from its stderr (10 s at most),
    killed at the end whatever happened."""
    with tempfile.TemporaryFile(mode="w+") as log:
        process = await asyncio.to_thread(
            subprocess.Popen,
            [WHARF, "serve", str(folder), "--http", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
        )
        try:
            url, deadline = None, time.monotonic() + 10
            while url is None and time.monotonic() < deadline and process.poll() is None:
                await asyncio.sleep(0.05)
                log.seek(0)
                found = re.search(r"(http://127\.0\.0\.1:\d+/mcp) \(Streamable HTTP\)", log.read())
                url = found and found.group(1)
            log.seek(0)
            assert url, f"no URL from wharf serve --http within 10 s: {log.read()}"
            yield url
        finally:
            process.kill()
            await asyncio.to_thread(process.wait, 10)


def text(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


async def extension(client, method, params):
    """A method the SDK has no typed call for, through `ClientSession.send_request` with a
    generic request; the result comes back as a plain dict."""
    request = types.Request[dict[str, Any], str](method=method, params=params)
    return await client.session.send_request(request, RAW)


class FolderServer(unittest.IsolatedAsyncioTestCase):
    async def exercise(self, folder, server, mode):
        heard = []

        async def on_message(message):
            if isinstance(message, types.PromptListChangedNotification):
                heard.append(message)

        with anyio.fail_after(60):
            async with mcp.Client(server, mode=mode, message_handler=on_message, read_timeout_seconds=15) as client:
                self.assertEqual(client.server_info.name, "folder-example")
                stateless = client.protocol_version.startswith("2026")
                self.assertEqual(stateless, mode == "auto")
                # Declared in both eras: in server/discover, and in a session's initialize.
                extensions = client.server_capabilities.extensions
                self.assertEqual(extensions[SKILLS_EXTENSION], {"directoryRead": True})
                await self.tools(client)
                await self.prompts(client)
                await self.resources(client, folder)
                await self.skills(client, folder)
                if stateless:
                    # Modern clients hear of changes through `subscriptions/listen`; the SDK tees
                    # its events to the message handler as notifications too.
                    async with client.listen(prompts_list_changed=True) as subscription:
                        self.assertTrue(subscription.honored.prompts_list_changed)
                        await self.reload(client, folder, heard)
                else:
                    # Over stdio the notification comes on stdout; over HTTP on the GET stream,
                    # which this SDK opens by itself once the session is initialized.
                    await self.reload(client, folder, heard)

    async def tools(self, client):
        listed = await client.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        self.assertEqual(sorted(tools), ["count_words", "text_stats"])
        self.assertEqual(tools["text_stats"].output_schema["required"], ["lines", "words", "characters"])
        sentence = "the quick brown fox jumps"
        counted = await client.call_tool("count_words", {"text": sentence})
        self.assertFalse(counted.is_error)
        self.assertEqual(text(counted).strip(), str(len(sentence.split())))
        sample = "one two\nthree"
        stats = await client.call_tool("text_stats", {"text": sample})
        self.assertFalse(stats.is_error)
        expected = {"lines": len(sample.splitlines()), "words": len(sample.split()), "characters": len(sample)}
        self.assertEqual(stats.structured_content, expected)

    async def prompts(self, client):
        listed = await client.list_prompts()
        names = [prompt.name for prompt in listed.prompts]
        self.assertEqual(sorted(names), ["code-review", "summarize"])
        code = "fn main() { println!(\"hi\"); }"
        prompt = await client.get_prompt("code-review", {"language": "rust", "code": code})
        rendered = prompt.messages[0].content.text
        self.assertIn(code, rendered)
        self.assertIn("rust", rendered)
        completion = await client.complete(
            types.PromptReference(type="ref/prompt", name="code-review"), {"name": "language", "value": "r"}
        )
        self.assertIn("rust", completion.completion.values)
        self.assertTrue(all(value.startswith("r") for value in completion.completion.values))

    async def resources(self, client, folder):
        listed = await client.list_resources()
        uris = {resource.uri: resource for resource in listed.resources}
        for uri in ["docs://guide.md", "docs://data/cities.json", "docs://data/pixel.png", SKILL]:
            self.assertIn(uri, uris)
        guide = await client.read_resource("docs://guide.md")
        self.assertEqual(guide.contents[0].text, (folder / "resources/guide.md").read_text())
        pixel = await client.read_resource("docs://data/pixel.png")
        self.assertEqual(pixel.contents[0].mime_type, "image/png")
        self.assertEqual(base64.b64decode(pixel.contents[0].blob), (folder / "resources/data/pixel.png").read_bytes())
        skill = await client.read_resource(SKILL)
        self.assertEqual(skill.contents[0].mime_type, "text/markdown")
        self.assertTrue(skill.contents[0].text.startswith("---"))
        self.assertEqual(skill.contents[0].text, (folder / "skills/release-notes/SKILL.md").read_text())

    async def skills(self, client, folder):
        root = folder / "skills/release-notes"
        listed = await extension(client, "skills/list", {})
        self.assertEqual([skill["uri"] for skill in listed["skills"]], [SKILL])
        entry = listed["skills"][0]
        self.assertEqual(entry["frontmatter"]["name"], "release-notes")
        files = {path.relative_to(root).as_posix(): path.read_bytes() for path in root.rglob("*") if path.is_file()}
        expected = [
            {"uri": f"skill://release-notes/{name}", "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}
            for name, data in files.items()
        ]
        self.assertEqual(sorted(entry["resources"], key=lambda file: file["uri"]), sorted(expected, key=lambda file: file["uri"]))
        got = await extension(client, "skills/get", {"uri": SKILL})
        self.assertEqual(got["skill"], entry)
        directory = await extension(client, "resources/directory/read", {"uri": "skill://release-notes"})
        children = {child["uri"]: child for child in directory["resources"]}
        self.assertEqual(children["skill://release-notes/references"]["mimeType"], "inode/directory")
        self.assertIn(SKILL, children)
        style = await client.read_resource("skill://release-notes/references/style.md")
        self.assertEqual(style.contents[0].text, (root / "references/style.md").read_text())

    async def reload(self, client, folder, heard):
        """Edits the served folder; within 5 s the client reads the new guide and lists the new
        prompt, and has heard that the prompts changed."""
        new_guide = f"# Folder guide\n\nRewritten while serving ({time.time_ns()}).\n"
        (folder / "resources/guide.md").write_text(new_guide)
        (folder / "prompts/new.md").write_text(NEW_PROMPT)
        guide, prompts = None, {}
        for _ in range(50):
            guide = (await client.read_resource("docs://guide.md")).contents[0].text
            prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
            if guide == new_guide and "new" in prompts and heard:
                break
            await asyncio.sleep(0.1)
        self.assertEqual(guide, new_guide)
        self.assertIn("new", prompts, "the prompt added to the folder is listed")
        self.assertEqual(prompts["new"].description, "Added while serving")
        self.assertEqual(text_of_prompt(await client.get_prompt("new", {})), "Hello.")
        self.assertTrue(heard, "notifications/prompts/list_changed arrived")

    async def test_stdio_2025_session(self):
        with folder_copy() as folder:
            await self.exercise(folder, mcp.StdioServerParameters(command=WHARF, args=["serve", str(folder)]), "legacy")

    async def test_stdio_2026_stateless(self):
        with folder_copy() as folder:
            await self.exercise(folder, mcp.StdioServerParameters(command=WHARF, args=["serve", str(folder)]), "auto")

    async def test_http_2025_session(self):
        with folder_copy() as folder:
            async with http_server(folder) as url:
                await self.exercise(folder, url, "legacy")

    async def test_http_2026_stateless(self):
        with folder_copy() as folder:
            async with http_server(folder) as url:
                await self.exercise(folder, url, "auto")


def text_of_prompt(prompt):
    return "\n".join(message.content.text for message in prompt.messages).strip()


if __name__ == "__main__":
    outcome = unittest.main(verbosity=2, exit=False).result
    failed = len(outcome.failures) + len(outcome.errors)
    print(f"python-sdk folder: {outcome.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed or not outcome.testsRun else 0)
