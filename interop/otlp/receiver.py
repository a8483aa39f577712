"""An OTLP/HTTP receiver for the tests, on the official opentelemetry-proto definitions.

Usage: receiver.py DIR. Listens on a free loopback port, writes the port to DIR/port, and
appends every export it receives to DIR/traces.jsonl or DIR/metrics.jsonl as one JSON line
(protobuf's JSON mapping, with trace and span ids in hex). Answers 200 with an empty
Export*ServiceResponse, as a collector does.
"""

import base64
import gzip
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

OUT = sys.argv[1]
SIGNALS = {
    "/v1/traces": ("traces", trace_service_pb2.ExportTraceServiceRequest, trace_service_pb2.ExportTraceServiceResponse),
    "/v1/metrics": (
        "metrics",
        metrics_service_pb2.ExportMetricsServiceRequest,
        metrics_service_pb2.ExportMetricsServiceResponse,
    ),
}
ID_KEYS = {"traceId", "spanId", "parentSpanId"}


def hex_ids(value):
    """Turns the base64 ids of protobuf's JSON mapping into the hex the W3C headers use."""
    if isinstance(value, dict):
        return {
            key: base64.b64decode(item).hex() if key in ID_KEYS and isinstance(item, str) else hex_ids(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [hex_ids(item) for item in value]
    return value


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.answer(200 if self.path == "/ready" else 404, b"")

    def do_POST(self):
        signal = SIGNALS.get(self.path)
        if signal is None:
            return self.answer(404, b"")
        if self.headers.get("content-type") != "application/x-protobuf":
            return self.answer(415, b"")
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        name, request_type, response_type = signal
        request = request_type()
        request.ParseFromString(body)
        with open(os.path.join(OUT, name + ".jsonl"), "a", encoding="utf-8") as out:
            out.write(json.dumps(hex_ids(MessageToDict(request))) + "\n")
        self.answer(200, response_type().SerializeToString())

    def answer(self, status, payload):
        self.send_response(status)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


server = HTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(OUT, "port.tmp"), "w", encoding="utf-8") as port:
    port.write(str(server.server_address[1]))
os.rename(os.path.join(OUT, "port.tmp"), os.path.join(OUT, "port"))
server.serve_forever()
