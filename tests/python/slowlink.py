"""A slow or lossy TCP link between stoker and a server, for the remote-storage tests.

`tc netem` would be the tool, but this machine's kernel has no sch_netem (tc: "Specified
qdisc kind is unknown"), so latency and dropped connections come from this proxy, and
bandwidth from the kernel's own token bucket (`tc qdisc ... tbf`) on a veth pair into a
network namespace (netns.py). Each byte is held for DELAY seconds in each direction (a round
trip of 2 x DELAY, new connections included); with --drop-every K, every K-th chunk from the
server (counted over all connections; with --drop-min-bytes B only chunks of at least B
bytes count, which spares HEAD responses) ends its connection with a reset instead,
mid-response, as a flaky link or a restarting load balancer does.

Run as a process: python slowlink.py --listen PORT --upstream HOST:PORT --delay S
[--drop-every K] [--stats FILE]; it prints "ready" once listening and, with --stats, rewrites
FILE (JSON: connections, chunks, drops, max concurrent connections) every 0.2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

from servers import Server, free_port


class Link:
    def __init__(self, upstream, delay, drop_every, drop_min_bytes):
        self.host, port = upstream.rsplit(":", 1)
        self.port = int(port)
        self.delay, self.drop_every, self.drop_min_bytes = delay, drop_every, drop_min_bytes
        self.connections = self.chunks = self.drops = self.open = self.max_open = 0

    async def pump(self, reader, writer, from_server, peer):
        """Copies reader to writer, each chunk DELAY seconds late, in order."""
        queue: asyncio.Queue = asyncio.Queue()

        async def read():
            try:
                while True:
                    data = await reader.read(1 << 20)
                    await queue.put((time.monotonic() + self.delay, data))
                    if not data:
                        return
            except (ConnectionError, OSError):
                await queue.put((time.monotonic(), b""))

        async def write():
            try:
                while True:
                    due, data = await queue.get()
                    wait = due - time.monotonic()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    if not data:
                        if writer.can_write_eof():
                            writer.write_eof()
                        return
                    counted = from_server and len(data) >= self.drop_min_bytes
                    if counted:
                        self.chunks += 1
                    if counted and self.drop_every and self.chunks % self.drop_every == 0:
                        self.drops += 1
                        writer.transport.abort()  # a reset, mid-response
                        peer.transport.abort()
                        return
                    writer.write(data)
                    await writer.drain()
            except (ConnectionError, OSError):
                peer.transport.abort()

        await asyncio.gather(read(), write())

    async def handle(self, client_reader, client_writer):
        self.connections += 1
        self.open += 1
        self.max_open = max(self.max_open, self.open)
        try:
            await asyncio.sleep(2 * self.delay)  # the handshake's round trip
            server_reader, server_writer = await asyncio.open_connection(self.host, self.port)
            await asyncio.gather(
                self.pump(client_reader, server_writer, False, client_writer),
                self.pump(server_reader, client_writer, True, server_writer))
        except (ConnectionError, OSError):
            pass
        finally:
            self.open -= 1
            client_writer.transport.abort()

    def stats(self):
        return {"connections": self.connections, "chunks": self.chunks, "drops": self.drops,
                "max_open": self.max_open}


async def serve(args):
    link = Link(args.upstream, args.delay, args.drop_every, args.drop_min_bytes)
    server = await asyncio.start_server(link.handle, "127.0.0.1", args.listen, backlog=1024)
    print("ready", flush=True)
    async with server:
        while True:
            await asyncio.sleep(0.2)
            if args.stats:
                tmp = Path(args.stats + ".tmp")
                tmp.write_text(json.dumps(link.stats()))
                tmp.replace(args.stats)


class SlowLink(Server):
    """The proxy as a child process: `url` reaches `upstream` through it."""

    def __init__(self, upstream: str, delay: float, work: Path, drop_every: int = 0,
                 port: int = 0, drop_min_bytes: int = 0):
        work.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.stats_file = work / f"link-{self.port}.json"
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--listen", str(self.port), "--upstream", upstream,
             "--delay", str(delay), "--drop-every", str(drop_every), "--drop-min-bytes",
             str(drop_min_bytes), "--stats",
             str(self.stats_file)], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "ready"
        self.url = f"http://127.0.0.1:{self.port}"

    def stats(self) -> dict:
        time.sleep(0.5)  # the proxy rewrites its file every 0.2 s
        return json.loads(self.stats_file.read_text())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", type=int, required=True)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--delay", type=float, default=0.01, help="one-way delay, seconds")
    parser.add_argument("--drop-every", type=int, default=0)
    parser.add_argument("--drop-min-bytes", type=int, default=0)
    parser.add_argument("--stats")
    args = parser.parse_args()
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
