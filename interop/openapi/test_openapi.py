"""`wharf serve --openapi` in front of real API servers, driven by the official Python SDK client
in a 2025 session and on 2026-07-28.

- The FastAPI application of pets_api.py, served by uvicorn on a free loopback port, whose own
  OpenAPI 3.1 document Wharf fetches: every tool is called and gets the API's answers; then
  attacks (path parameters that try to leave their segment, a header value with a line break,
  an argument the operation does not have) are refused or stay on their operation's path, which
  the API's own request log shows, with the API key configured for Wharf on every request and
  never in Wharf's log.
- Prism (npm, in node_modules here) serving store.yaml, a 3.0 document with `$ref`s,
  `nullable`, `allOf`, `oneOf`, form, text and binary bodies and an API key: Prism checks every
  request against the document (422 when one does not fit, 401 without the key), so each call
  it answers was written as the document says.

Run with the Python SDK's virtual environment (fastapi and uvicorn installed) after `npm ci`
here: `python test_openapi.py`; WHARF_BIN names the wharf binary.
"""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import mcp
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

HERE = Path(__file__).resolve().parent
WHARF = os.environ.get("WHARF_BIN", str(HERE / "../../target/debug/wharf"))
API_KEY = "pets-key-5f3a"


class PetsApi:
    """uvicorn serving pets_api.py on a free loopback port, its requests logged to a file;
    stopped (by pid) at the end."""

    def __enter__(self):
        self.dir = tempfile.TemporaryDirectory(prefix="wharf-openapi-")
        self.log = Path(self.dir.name) / "requests.jsonl"
        self.stderr = open(Path(self.dir.name) / "uvicorn.log", "w+")
        env = dict(os.environ, PETS_REQUEST_LOG=str(self.log))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "pets_api:app", "--host", "127.0.0.1", "--port", "0"],
            cwd=HERE, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr,
        )
        deadline = time.monotonic() + 20
        self.base = None
        while self.base is None and time.monotonic() < deadline and self.process.poll() is None:
            time.sleep(0.05)
            self.stderr.seek(0)
            found = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", self.stderr.read())
            self.base = found and found.group(1)
        if self.base is None:
            self.stderr.seek(0)
            self.__exit__(None, None, None)
            raise AssertionError(f"uvicorn did not start within 20 s: {self.stderr.read()}")
        with urllib.request.urlopen(f"{self.base}/openapi.json", timeout=10) as answer:
            assert answer.status == 200
        return self

    def requests(self):
        """Every request that reached the API since the last call, as it arrived."""
        if not self.log.exists():
            return []
        lines = self.log.read_text().splitlines()
        self.log.write_text("")
        return [json.loads(line) for line in lines]

    def __exit__(self, *_):
        self.process.kill()
        self.process.wait(10)
        self.stderr.close()
        self.dir.cleanup()


def text(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


async def refused(client, name, arguments):
    """True when the call is refused before anything is sent: a JSON-RPC error, or an error
    result."""
    try:
        result = await client.call_tool(name, arguments)
    except MCPError:
        return True
    return bool(result.is_error)


class OpenApiServer(unittest.IsolatedAsyncioTestCase):
    async def exercise(self, api, mode):
        with tempfile.TemporaryFile(mode="w+") as wharf_log:
            server = mcp.StdioServerParameters(
                command=WHARF,
                args=["serve", "--openapi", f"{api.base}/openapi.json", "--base-url", api.base,
                      "--header", "X-Api-Key=PETS_API_KEY"],
                env=dict(os.environ, PETS_API_KEY=API_KEY, WHARF_LOG="debug"),
            )
            with anyio.fail_after(60):
                transport = stdio_client(server, errlog=wharf_log)
                async with mcp.Client(transport, mode=mode, read_timeout_seconds=15) as client:
                    self.assertEqual(client.server_info.name, "Pets")
                    api.requests()  # the document's fetch
                    await self.calls(client, api)
                    await self.attacks(client, api)
            wharf_log.seek(0)
            logged = wharf_log.read()
            self.assertIn("OpenAPI call", logged, "debug logging was on")
            self.assertNotIn(API_KEY, logged, "the API key is never logged")

    async def calls(self, client, api):
        listed = await client.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        self.assertEqual(sorted(tools), ["createPet", "deletePet", "getPet", "listPets", "readFile"])
        self.assertTrue(tools["getPet"].annotations.read_only_hint)
        self.assertTrue(tools["deletePet"].annotations.destructive_hint)
        self.assertEqual(tools["getPet"].input_schema["required"], ["pet_id"])
        self.assertEqual(tools["getPet"].output_schema["type"], "object")

        pets = await client.call_tool("listPets", {})
        self.assertFalse(pets.is_error, text(pets))
        self.assertEqual([pet["name"] for pet in json.loads(text(pets))], ["Rex", "Tom"])
        cats = await client.call_tool("listPets", {"kind": "cat", "limit": 5})
        self.assertEqual([pet["name"] for pet in json.loads(text(cats))], ["Tom"])
        rex = await client.call_tool("getPet", {"pet_id": 1, "x-request-id": "trace-7"})
        self.assertEqual(rex.structured_content, {"id": 1, "name": "Rex", "kind": "dog", "owner": {"name": "Ada", "email": None}})
        missing = await client.call_tool("getPet", {"pet_id": 99})
        self.assertTrue(missing.is_error)
        self.assertIn("404", text(missing))
        self.assertIn("no pet 99", text(missing))
        made = await client.call_tool("createPet", {"body": {"name": "Kit", "kind": "cat", "owner": {"name": "Bo"}}})
        self.assertFalse(made.is_error, text(made))
        self.assertEqual(made.structured_content["name"], "Kit")
        blank = await client.call_tool("createPet", {"body": {"name": "  ", "kind": "cat"}})
        self.assertTrue(blank.is_error)
        self.assertIn("422", text(blank))
        self.assertIn("cannot be blank", text(blank))
        gone = await client.call_tool("deletePet", {"pet_id": made.structured_content["id"]})
        self.assertFalse(gone.is_error, text(gone))
        self.assertIn("204", text(gone))
        arrived = api.requests()
        seen = [(request["method"], request["raw_path"], request["query"]) for request in arrived]
        self.assertEqual(arrived[2]["x_request_id"], "trace-7", "a header parameter")
        self.assertTrue(all(request["x_api_key"] == API_KEY for request in arrived), "the configured key")
        made_id = made.structured_content["id"]
        # The schema's defaults are filled in before the call, as for every Wharf tool.
        self.assertEqual(seen, [
            ("GET", "/pets", "limit=10"),
            ("GET", "/pets", "kind=cat&limit=5"),
            ("GET", "/pets/1", ""),
            ("GET", "/pets/99", ""),
            ("POST", "/pets", ""),
            ("POST", "/pets", ""),
            ("DELETE", f"/pets/{made_id}", ""),
        ])

    async def attacks(self, client, api):
        for name in ["../admin", "..%2Fadmin", "a/b", "\u0000", "http://evil.example/admin", "x?y#z"]:
            await client.call_tool("readFile", {"name": name})
        for name in ["..", ".", ""]:
            self.assertTrue(await refused(client, "readFile", {"name": name}), name)
        self.assertTrue(await refused(client, "getPet", {"pet_id": 1, "x-request-id": "a\r\nX-Admin: 1"}))
        self.assertTrue(await refused(client, "getPet", {"pet_id": 1, "host": "evil.example"}))
        self.assertTrue(await refused(client, "getPet", {"pet_id": "1/../../admin"}))
        seen = api.requests()
        paths = [request["raw_path"] for request in seen]
        self.assertEqual(paths, [
            "/files/..%2Fadmin",
            "/files/..%252Fadmin",
            "/files/a%2Fb",
            "/files/%00",
            "/files/http%3A%2F%2Fevil.example%2Fadmin",
            "/files/x%3Fy%23z",
        ])
        for request in seen:
            self.assertEqual(request["host"], api.base.removeprefix("http://"))
            self.assertEqual(request["x_api_key"], API_KEY)
            self.assertIsNone(request["x_request_id"])
        # `..%2Fadmin` reached the file operation as its one segment, as FastAPI decoded it.
        encoded = await client.call_tool("readFile", {"name": "..%2Fadmin"})
        self.assertEqual(encoded.structured_content, {"name": "..%2Fadmin"})
        api.requests()

    async def test_over_streamable_http(self):
        with PetsApi() as api, tempfile.TemporaryFile(mode="w+") as log:
            args = ["serve", "--openapi", f"{api.base}/openapi.json", "--base-url", api.base,
                    "--header", "X-Api-Key=PETS_API_KEY", "--http", "127.0.0.1:0"]
            process = subprocess.Popen([WHARF, *args], env=dict(os.environ, PETS_API_KEY=API_KEY),
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
            try:
                url, deadline = None, time.monotonic() + 20
                while url is None and time.monotonic() < deadline and process.poll() is None:
                    time.sleep(0.05)
                    log.seek(0)
                    found = re.search(r"(http://127\.0\.0\.1:\d+/mcp) \(Streamable HTTP\)", log.read())
                    url = found and found.group(1)
                log.seek(0)
                self.assertTrue(url, f"no URL from wharf serve --http: {log.read()}")
                log.seek(0)
                self.assertIn("the API of", log.read())
                for mode in ["legacy", "auto"]:
                    with anyio.fail_after(60):
                        async with mcp.Client(url, mode=mode, read_timeout_seconds=15) as client:
                            api.requests()
                            await self.calls(client, api)
                            await self.attacks(client, api)
            finally:
                process.kill()
                process.wait(10)

    def test_wharf_check_passes(self):
        with PetsApi() as api:
            served = [WHARF, "serve", "--openapi", f"{api.base}/openapi.json", "--base-url", api.base]
            checked = subprocess.run([WHARF, "check", "--", *served], capture_output=True, text=True, timeout=120)
            self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)
            self.assertRegex(checked.stdout, r"\d+ passed, 0 failed")

    async def test_2025_session(self):
        with PetsApi() as api:
            await self.exercise(api, "legacy")

    async def test_2026_stateless(self):
        with PetsApi() as api:
            await self.exercise(api, "auto")


class Prism:
    """`prism mock store.yaml` on a free loopback port (its log in a file), stopped (by pid) at
    the end."""

    def __enter__(self):
        self.dir = tempfile.TemporaryDirectory(prefix="wharf-prism-")
        self.log = open(Path(self.dir.name) / "prism.log", "w+")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        prism = HERE / "node_modules/.bin/prism"
        self.process = subprocess.Popen(
            [str(prism), "mock", str(HERE / "store.yaml"), "-h", "127.0.0.1", "-p", str(port), "--errors"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        self.base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                with urllib.request.urlopen(f"{self.base}/login", data=b"", timeout=2):
                    break
            except urllib.error.HTTPError:
                break  # it answers (422: the form is missing)
            except OSError:
                time.sleep(0.2)
        else:
            self.log.seek(0)
            self.__exit__(None, None, None)
            raise AssertionError(f"prism did not answer within 60 s: {self.log.read()}")
        return self

    def verdicts(self):
        """Prism's verdict on each request since the last call: its validator's lines."""
        self.log.seek(0)
        lines = [line for line in self.log.read().splitlines() if "[VALIDATOR]" in line]
        self.log.seek(0)
        self.log.truncate()
        return lines

    def __exit__(self, *_):
        os.killpg(self.process.pid, 9)
        self.process.wait(10)
        self.log.close()
        self.dir.cleanup()


class PrismServer(unittest.IsolatedAsyncioTestCase):
    async def exercise(self, prism, mode):
        # Prism itself refuses what does not fit: a limit over the maximum.
        request = urllib.request.Request(f"{prism.base}/orders?limit=99", headers={"X-Store-Key": "k"})
        with self.assertRaises(urllib.error.HTTPError) as not_fit:
            urllib.request.urlopen(request, timeout=10)
        self.assertEqual(not_fit.exception.code, 422)
        prism.verdicts()
        args = ["serve", "--openapi", str(HERE / "store.yaml"), "--base-url", prism.base]
        without_key = mcp.StdioServerParameters(command=WHARF, args=args)
        with anyio.fail_after(60):
            async with mcp.Client(without_key, mode=mode, read_timeout_seconds=15) as client:
                listed = await client.list_tools()
                self.assertEqual(sorted(tool.name for tool in listed.tools),
                                 ["addNote", "createOrder", "getOrder", "listOrders", "login", "pay", "uploadReceipt"])
                unauthorized = await client.call_tool("listOrders", {})
                self.assertTrue(unauthorized.is_error)
                self.assertIn("401", text(unauthorized))
        with_key = mcp.StdioServerParameters(
            command=WHARF, args=args + ["--credential", "store_key=STORE_KEY"], env=dict(os.environ, STORE_KEY="k-9"),
        )
        with anyio.fail_after(60):
            async with mcp.Client(with_key, mode=mode, read_timeout_seconds=15) as client:
                listed = await client.list_tools()
                tools = {tool.name: tool for tool in listed.tools}
                status = tools["listOrders"].input_schema["properties"]["status"]
                self.assertEqual(status["type"], ["string", "null"])
                prism.verdicts()
                orders = await client.call_tool("listOrders", {"status": "placed", "limit": 50})
                self.assertFalse(orders.is_error, text(orders))
                self.assertEqual(json.loads(text(orders))[0]["item"], "kettle")
                placed = await client.call_tool("createOrder", {"body": {"item": "kettle", "quantity": 2, "note": None}})
                self.assertFalse(placed.is_error, text(placed))
                self.assertEqual(placed.structured_content["status"], "placed")
                order = await client.call_tool("getOrder", {"orderId": 7})
                self.assertEqual(order.structured_content["id"], 7)
                token = await client.call_tool("login", {"body": {"username": "ada", "password": "p w&x"}})
                self.assertEqual(token.structured_content, {"token": "tok-1"})
                paid = await client.call_tool("pay", {"body": {"method": "card", "number": "4111111111111111"}})
                self.assertEqual(paid.structured_content, {"paid": True})
                note = await client.call_tool("addNote", {"body": "buy more kettles"})
                self.assertEqual(note.structured_content, {"kept": True})
                receipt = await client.call_tool("uploadReceipt", {"orderId": 7, "body": "JVBERi0xLjQK"})
                self.assertFalse(receipt.is_error, text(receipt))
                self.assertIn("204", text(receipt))
                # What the schema refuses never reaches Prism.
                self.assertTrue(await refused(client, "pay", {"body": {"method": "card", "number": "12"}}))
                self.assertTrue(await refused(client, "getOrder", {"orderId": 0}))
                verdicts = prism.verdicts()
                self.assertEqual(len(verdicts), 7, "\n".join(verdicts))
                self.assertTrue(all("passed the validation rules" in verdict for verdict in verdicts), "\n".join(verdicts))

    async def test_2025_session(self):
        with Prism() as prism:
            await self.exercise(prism, "legacy")

    async def test_2026_stateless(self):
        with Prism() as prism:
            await self.exercise(prism, "auto")


if __name__ == "__main__":
    outcome = unittest.main(verbosity=2, exit=False).result
    failed = len(outcome.failures) + len(outcome.errors)
    print(f"openapi (FastAPI, Prism): {outcome.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed or not outcome.testsRun else 0)
