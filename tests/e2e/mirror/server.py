#!/usr/bin/env python3
"""HTTPS file server for the gpuprov e2e mirror, with per-request fault injection.

Listens on 127.0.0.1 only. Port 0 picks a free port, written to --port-file.
Faults are read from the JSON control file on every request:
    {"<path regex>": "500" | "404" | "hang" | "truncate", ...}
the first regex that re.search()es the request path wins.
  500 / 404  reply with that status and a short body
  hang       accept the request, send nothing for 60 s (E2E_HANG_SECONDS), then close;
             "hang:N" hangs N seconds
  truncate   send headers with the full Content-Length N, then N/2 bytes, then close
  file:NAME  serve NAME, from the requested file's directory, in its place (200, as if it
             were the requested file)
Every request is appended to --log as one JSON object per line: method, path, status, fault,
ua (User-Agent: tells apt's fetches from gpuprov's own).
Python 3 standard library only.
"""
import argparse
import json
import os
import re
import ssl
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

HANG_SECONDS = float(os.environ.get("E2E_HANG_SECONDS", "60"))
_log_lock = threading.Lock()


class Handler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "gpuprov-e2e-mirror/1"
    sys_version = ""

    def handle(self):
        try:
            self.request.do_handshake()
        except (ssl.SSLError, OSError):
            return
        super().handle()

    def log_message(self, fmt, *args):  # keep stderr quiet; the JSON log is the record
        pass

    def _record(self, status, fault=None):
        path = getattr(self, "requested", None) or self.path  # as asked, also when substituted
        entry = {"t": round(time.time(), 3), "method": self.command, "path": path.split("?", 1)[0],
                 "status": status, "fault": fault, "ua": (getattr(self, "headers", None) or {}).get("User-Agent", "")}
        with _log_lock, open(self.server.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def log_request(self, code="-", size="-"):
        try:
            status = int(getattr(code, "value", code))
        except (TypeError, ValueError):
            status = 0
        self._record(status, getattr(self, "substituted", None))

    def _fault(self):
        try:
            with open(self.server.control_path, encoding="utf-8") as f:
                rules = json.load(f)
        except (OSError, ValueError):
            return None
        path = self.path.split("?", 1)[0]
        for pattern, action in rules.items():
            try:
                if re.search(pattern, path):
                    return str(action)
            except re.error:
                continue
        return None

    def _handle(self, head_only):
        fault = self._fault()
        self.substituted = self.requested = None  # the handler outlives a keep-alive request
        if fault in ("500", "404"):
            code = int(fault)
            body = f"{code} injected by gpuprov e2e mirror\n".encode()
            self._record(code, fault)
            self.send_response_only(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head_only:
                self.wfile.write(body)
            return
        if fault is not None and fault.startswith("hang"):
            self._record(0, fault)
            seconds = HANG_SECONDS
            if ":" in fault:  # "hang:SECONDS"
                try:
                    seconds = float(fault.split(":", 1)[1])
                except ValueError:
                    pass
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline and not self.server.stopping.is_set():
                time.sleep(0.2)
            self.close_connection = True
            return
        if fault == "truncate":
            fspath = self.translate_path(self.path)
            try:
                with open(fspath, "rb") as f:
                    data = f.read()
            except OSError:
                self.send_error(404)
                return
            self._record(200, fault)
            self.send_response_only(200)
            self.send_header("Content-Type", self.guess_type(fspath))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if not head_only:
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
            self.close_connection = True
            return
        if fault is not None and fault.startswith("file:"):
            name = fault.split(":", 1)[1]
            self.requested = path = self.path.split("?", 1)[0]
            self.path = path[: path.rfind("/") + 1] + name
            self.substituted = fault
        if head_only:
            super().do_HEAD()
        else:
            super().do_GET()

    def do_GET(self):
        self._handle(False)

    def do_HEAD(self):
        self._handle(True)

    def list_directory(self, path):  # no directory listings
        self.send_error(404)
        return None


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def get_request(self):
        sock, addr = super().get_request()
        sock.settimeout(120)  # bounded: a stuck client cannot pin a thread forever
        return sock, addr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--control", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()

    root = os.path.abspath(args.root)

    def handler(*a, **kw):
        return Handler(*a, directory=root, **kw)

    httpd = Server(("127.0.0.1", args.port), handler)
    httpd.control_path = args.control
    httpd.log_path = args.log
    httpd.stopping = threading.Event()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(args.cert, args.key)
    # Handshake in the handler thread, not in accept(): a slow client cannot block the listener.
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)

    port = httpd.server_address[1]
    tmp = args.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(f"{port}\n")
    os.replace(tmp, args.port_file)
    print(f"serving {root} on https://127.0.0.1:{port}/", file=sys.stderr, flush=True)
    try:
        httpd.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        httpd.stopping.set()
        httpd.server_close()


if __name__ == "__main__":
    main()
