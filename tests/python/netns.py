"""Network namespaces joined to this one by veth pairs, for the remote-storage and multi-node
tests: a server (or a "node") in its own namespace reached over a real link that the kernel
can shape (`tc qdisc ... tbf` limits its bandwidth). Needs root (CAP_NET_ADMIN), the `ip` and
`tc` commands (Debian's iproute2) and `nsenter` (util-linux); a test without them fails, naming
what is missing."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from typing import List, Optional

import pytest

_counter = itertools.count()


def _run(*cmd: str) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")


def require_netns() -> None:
    if os.geteuid() != 0:
        pytest.fail("network namespaces need root (CAP_NET_ADMIN): run the suite as root")
    for tool, package in (("ip", "iproute2"), ("tc", "iproute2"), ("nsenter", "util-linux")):
        if shutil.which(tool) is None:
            pytest.fail(f"the {tool} command is missing (Debian's {package})")


class Namespace:
    """A namespace `name` with a veth link to the root namespace: this side HOST_IP, the
    namespace side IP (10.211.K.1 and .2). `rate`: a token-bucket limit ("2mbit") on what the
    namespace sends over the link."""

    def __init__(self, rate: Optional[str] = None):
        require_netns()
        k = next(_counter) % 250 + 1
        tag = f"{os.getpid() % 10000}{k}"
        self.name = f"stk{tag}"
        self.host_dev, self.ns_dev = f"stkh{tag}", f"stkn{tag}"
        self.host_ip, self.ip = f"10.211.{k}.1", f"10.211.{k}.2"
        _run("ip", "netns", "add", self.name)
        try:
            _run("ip", "link", "add", self.host_dev, "type", "veth", "peer", "name", self.ns_dev)
            _run("ip", "link", "set", self.ns_dev, "netns", self.name)
            _run("ip", "addr", "add", f"{self.host_ip}/24", "dev", self.host_dev)
            _run("ip", "link", "set", self.host_dev, "up")
            self.exec_quiet("ip", "addr", "add", f"{self.ip}/24", "dev", self.ns_dev)
            self.exec_quiet("ip", "link", "set", self.ns_dev, "up")
            self.exec_quiet("ip", "link", "set", "lo", "up")
            if rate:
                self.exec_quiet("tc", "qdisc", "add", "dev", self.ns_dev, "root", "tbf", "rate",
                                rate, "burst", "16kb", "latency", "400ms")
        except Exception:
            self.close()
            raise

    def prefix(self) -> List[str]:
        """The command prefix that runs a program in the namespace: nsenter into its network
        namespace only (`ip netns exec` also remounts / and /sys, which fails in a chroot)."""
        return ["nsenter", f"--net=/run/netns/{self.name}"]

    def exec_quiet(self, *cmd: str) -> None:
        _run(*self.prefix(), *cmd)

    def close(self) -> None:
        subprocess.run(["ip", "link", "del", self.host_dev], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Network:
    """`nodes` namespaces on one bridge in the root namespace, as machines on one switch: the
    bridge has HOST_IP (10.212.K.1), node i has IPS[i] (10.212.K.(2 + i)) on its DEVS[i]."""

    def __init__(self, nodes: int):
        require_netns()
        k = next(_counter) % 250 + 1
        tag = f"{os.getpid() % 10000}{k}"
        self.bridge = f"stkb{tag}"
        self.host_ip = f"10.212.{k}.1"
        self.names, self.devs, self.ips, self._host_devs = [], [], [], []
        try:
            _run("ip", "link", "add", self.bridge, "type", "bridge")
            _run("ip", "addr", "add", f"{self.host_ip}/24", "dev", self.bridge)
            _run("ip", "link", "set", self.bridge, "up")
            for i in range(nodes):
                name, host_dev, dev = f"stk{tag}n{i}", f"stkh{tag}n{i}", f"stkd{tag}n{i}"
                ip = f"10.212.{k}.{2 + i}"
                _run("ip", "netns", "add", name)
                self.names.append(name)
                _run("ip", "link", "add", host_dev, "type", "veth", "peer", "name", dev)
                self._host_devs.append(host_dev)
                _run("ip", "link", "set", dev, "netns", name)
                _run("ip", "link", "set", host_dev, "master", self.bridge)
                _run("ip", "link", "set", host_dev, "up")
                for cmd in (("ip", "addr", "add", f"{ip}/24", "dev", dev),
                            ("ip", "link", "set", dev, "up"), ("ip", "link", "set", "lo", "up")):
                    _run("nsenter", f"--net=/run/netns/{name}", *cmd)
                self.devs.append(dev)
                self.ips.append(ip)
        except Exception:
            self.close()
            raise

    def prefix(self, node: int) -> List[str]:
        return ["nsenter", f"--net=/run/netns/{self.names[node]}"]

    def close(self) -> None:
        for dev in self._host_devs:
            subprocess.run(["ip", "link", "del", dev], capture_output=True)
        for name in self.names:
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
