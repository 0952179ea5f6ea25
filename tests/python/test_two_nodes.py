"""Two "nodes" on one machine: two network namespaces on a bridge, each running torchrun with
2 ranks (gloo over the bridge addresses, torchrun's static rendezvous with --nnodes 2 and
--node-rank), all 4 ranks reading the same WebDataset shards from nginx in the root
namespace. Every sample exactly once per epoch over the 4 ranks, the same samples as 4 ranks
on one node get (the order does not depend on where the ranks run), thread defaults per node
(the CPUs of the node / its 2 ranks), and each node's index cache and remote object cache
(STOKER_REMOTE_CACHE) shared by its ranks: each shard crosses the network once per node."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys

from conftest import WORKER, launch, torchrun
from netns import Network
from servers import Nginx, free_port
from test_webdataset import N, images, shards  # noqa: F401


def test_two_nodes_of_two_ranks_read_remote_shards_each_sample_once(shards, tmp_path):
    args = {"scenario": "nodes", "batch_size": 4, "epochs": [0, 1]}
    with Network(nodes=2) as net, \
            Nginx(shards["root"], tmp_path / "nginx", listen=net.host_ip) as server:
        data = f"{server.url}/cls/train-{{000000..000004}}.tar"
        out = tmp_path / "out"
        out.mkdir()
        worker_args = json.dumps(dict(args, data=data, out=str(out), per_rank=[]))
        port = free_port()
        procs = []
        for node in range(2):
            cache = tmp_path / f"node{node}-cache"
            cache.mkdir()
            env = dict(os.environ, OMP_NUM_THREADS="1", STOKER_CACHE_DIR=str(cache),
                       STOKER_REMOTE_CACHE=str(tmp_path / f"node{node}-objects"),
                       GLOO_SOCKET_IFNAME=net.devs[node])
            cmd = [*net.prefix(node), *torchrun(), "--nnodes=2", f"--node-rank={node}",
                   "--nproc-per-node=2", f"--master-addr={net.ips[0]}", f"--master-port={port}",
                   "--max-restarts=0", str(WORKER), worker_args]
            procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True))
        logs = []
        try:
            for proc in procs:
                logs.append(proc.communicate(timeout=240)[0])
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.terminate()
                    proc.communicate(timeout=60)
        for node, proc in enumerate(procs):
            assert proc.returncode == 0, f"node {node} failed:\n{logs[node]}"
        results = [json.loads((out / f"rank{rank}.json").read_text()) for rank in range(4)]
        gets = [(path, rng) for method, path, rng in server.requests() if method == "GET"]

    # Each node fetched each shard once, whole, for both its ranks and both epochs.
    sizes = {f"/cls/{p.name}": p.stat().st_size for p in (shards["root"] / "cls").iterdir()}
    assert sorted(gets) == sorted((p, f"bytes=0-{s - 1}") for p, s in sizes.items() for _ in (0, 1))
    for node in range(2):
        copies = sorted((tmp_path / f"node{node}-objects").glob("*.obj"))
        assert sorted(c.stat().st_size for c in copies) == sorted(sizes.values())

    assert [r["group_rank"] for r in results] == [0, 0, 1, 1]
    assert {r["local_world_size"] for r in results} == {2}
    for r in results:
        assert r["threads"] == max(1, r["cpus"] // 2), r  # the node's CPUs over its 2 ranks
        assert sum(name.startswith("wds-") for name in r["cache"]) == 5  # one index per shard
    # The same 4 ranks on one node: the same samples per rank, so where a rank runs is not
    # part of the order.
    single = launch(4, tmp_path, {"scenario": "epochs", "batch_size": 4, "epochs": [0, 1],
                                  "data": shards["cls"], "shard_window": 4})
    for epoch in ("0", "1"):
        per_rank = [r["epochs"][epoch] for r in results]
        counts = collections.Counter(i for valid in per_rank for i in valid)
        assert sorted(counts) == list(range(N)) and max(counts.values()) == 1
        assert per_rank == [r["epochs"][epoch]["valid"] for r in single]
