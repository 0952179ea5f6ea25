#!/usr/bin/env python3
"""CPU nodes feeding trainers: stoker on Ray vs Ray Data, and vs in-process stoker, same cores.

A Ray cluster on this machine (ray.cluster_utils.Cluster, loopback): a head where the trainer
ranks run (the driver's threads, no Ray CPU) and --nodes CPU-only nodes of --cpus-per-node
CPUs each. The photos of bench/data/photos-0.3mp (bench/make_photo_set.py); per image
RandomResizedCrop(SIZE) + horizontal flip + Normalize to float32 CHW, batches of --batch, for
--ranks trainer ranks.

  stoker-ray     stoker.ray: one producer per CPU node (num_cpus = threads = its CPUs), each
                 rank's RayLoader taking its steps from them through the object store
  ray-data       ray.data.read_images(paths, include_paths=True).map_batches(torchvision v2
                 transforms per image, tasks) .streaming_split(ranks, equal=True), made
                 once, each rank's split.iter_torch_batches(batch_size, collate_fn: the
                 images as a tensor, the paths kept) every epoch
  stoker         in-process stoker.Loader per rank, threads = the nodes' CPUs / ranks (the
                 same cores, no transport): what stoker-ray's transport costs

Per pipeline: images/s over an epoch after a warm-up epoch, per CPU core of the nodes; whether
two epochs of the same seed give the same order (stoker: the batch digests of a repeated
epoch; Ray Data: the paths of two runs of the same pipeline); and with --kill, one CPU node
removed after a third of the epoch and a new one added: the samples missing and duplicated in
that epoch. With --colocate the producers' CPUs are the head's (the trainers' node): no
transfer between object stores. Rounds alternate the pipelines; medians.
Run: ./run.sh bench --ray [--rounds 3]
(its own venv: ray[data], torch, torchvision).
"""

import argparse
import glob
import hashlib
import os
import statistics
import sys
import threading
import time
from collections import Counter

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # every node on loopback

import numpy as np  # noqa: E402
import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

import stoker  # noqa: E402
import stoker.ray  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PHOTOS = os.path.join(HERE, "data", "photos-0.3mp")
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nodes", type=int, default=2)
    p.add_argument("--cpus-per-node", type=int, default=1)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--output", default="float32", choices=("float32", "uint8"),
                   help="uint8: crop and flip only, normalising left to the GPU")
    p.add_argument("--kill", action="store_true", help="also the node-failure column")
    p.add_argument("--colocate", action="store_true",
                   help="the producers' CPUs on the trainers' node (no transfer between "
                        "object stores): what Ray's serialisation and store cost alone")
    p.add_argument("--pipelines", default="stoker-ray,ray-data,stoker")
    return p.parse_args()


class Bench:
    def __init__(self, args):
        self.args = args
        self.paths = sorted(glob.glob(os.path.join(PHOTOS, "*", "*.jpg")))
        if not self.paths:
            sys.exit(f"bench/ray_loaders.py: no photos in {PHOTOS}: run ./run.sh bench once")
        if args.colocate and args.kill:
            sys.exit("bench/ray_loaders.py: --kill needs CPU nodes of their own")
        head_cpus = args.nodes * args.cpus_per_node if args.colocate else 0
        self.cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": head_cpus, "resources": {"cpu_node": args.nodes} if args.colocate else {},
            "object_store_memory": 400 * 2**20,
            "_system_config": {"health_check_period_ms": 500,
                               "health_check_failure_threshold": 2}})
        self.nodes = [] if args.colocate else [self.add_node() for _ in range(args.nodes)]
        ray.init(address=self.cluster.address, namespace="bench", log_to_driver=False)
        self.pool = None
        self.cores = args.nodes * args.cpus_per_node

    def add_node(self):
        return self.cluster.add_node(num_cpus=self.args.cpus_per_node,
                                     resources={"cpu_node": 1},
                                     object_store_memory=400 * 2**20)

    # -- the pipelines: each returns, per rank, an iterable of (n, ids) per batch -------------

    def stoker_ray(self, epoch):
        a = self.args
        if self.pool is None:
            self.pool = stoker.ray.start_producers(
                PHOTOS, a.batch, count=a.nodes, num_cpus=a.cpus_per_node, name="bench",
                actor_options={"resources": {"cpu_node": 1}}, size=a.size, seed=0,
                output=a.output)
            self.loaders = [stoker.ray.RayLoader("bench", rank=r, world_size=a.ranks)
                            for r in range(a.ranks)]
        for loader in self.loaders:
            loader.set_epoch(epoch)
        return [_stoker_batches(loader) for loader in self.loaders]

    def release(self, name):
        """Frees the CPU nodes for `name`: the producers hold their CPUs while they live."""
        if name != "stoker-ray" and self.pool is not None:
            self.pool.shutdown()
            self.pool = None
            deadline = time.monotonic() + 60
            while ray.available_resources().get("CPU", 0) < self.cores:
                if time.monotonic() > deadline:
                    sys.exit("bench/ray_loaders.py: the producers' CPUs were not freed")
                time.sleep(0.2)

    def stoker_local(self, epoch):
        a = self.args
        if not hasattr(self, "local"):
            threads = max(1, self.cores // a.ranks)
            self.local = [stoker.Loader(PHOTOS, a.batch, rank=r, world_size=a.ranks,
                                        threads=threads, size=a.size, seed=0,
                                        output=a.output)
                          for r in range(a.ranks)]
        for loader in self.local:
            loader.set_epoch(epoch)
        return [_stoker_batches(loader) for loader in self.local]

    def ray_data(self, epoch):
        a = self.args
        if not hasattr(self, "splits"):  # made once, iterated every epoch (Ray Train's way)
            import ray.data
            ds = ray.data.read_images(self.paths, include_paths=True, mode="RGB")
            ds = ds.map_batches(_torchvision_recipe,
                                fn_kwargs={"size": a.size, "output": a.output},
                                batch_size=a.batch, batch_format="numpy")
            self.splits = ds.streaming_split(a.ranks, equal=True)
        return [_ray_data_batches(s, a.batch) for s in self.splits]

    PIPELINES = {"stoker-ray": stoker_ray, "ray-data": ray_data, "stoker": stoker_local}

    def epoch(self, name, epoch, at_step=None, action=None):
        """(seconds, images, [ids per rank in order]) of one epoch over every rank at once;
        with `action`, the main thread (Ray starts nodes only from there) runs it once rank 0
        has taken step `at_step`."""
        self.release(name)
        ranks = self.PIPELINES[name](self, epoch)
        seen = [[] for _ in ranks]
        errors = []
        reached = threading.Event()

        def run(r, batches):
            try:
                for step, ids in enumerate(batches):
                    seen[r].append(ids)
                    if r == 0 and step == at_step:
                        reached.set()
            except Exception as e:  # reported below
                errors.append(e)
            finally:
                if r == 0:
                    reached.set()

        start = time.perf_counter()
        threads = [threading.Thread(target=run, args=(r, b)) for r, b in enumerate(ranks)]
        for t in threads:
            t.start()
        if action is not None:
            reached.wait()
            action()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - start
        if errors:
            raise errors[0]
        images = sum(len(ids) for rank in seen for ids in rank)
        return seconds, images, seen


_RECIPE = {}


def _torchvision_recipe(batch, size, output):
    """Ray Data's map_batches task: torchvision v2 transforms, one image at a time."""
    import torch
    from torchvision.transforms import v2
    if (size, output) not in _RECIPE:
        torch.set_num_threads(1)
        ops = [v2.RandomResizedCrop(size, antialias=True), v2.RandomHorizontalFlip()]
        if output == "float32":
            ops += [v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)]
        _RECIPE[(size, output)] = v2.Compose(ops)
    t = _RECIPE[(size, output)]
    out = [t(torch.from_numpy(np.ascontiguousarray(im)).permute(2, 0, 1)).numpy()
           for im in batch["image"]]
    return {"image": np.stack(out), "path": batch["path"]}


def _stoker_batches(loader):
    for b in loader:
        keep = np.asarray(b.valid).astype(bool)
        yield [int(i) for i in np.asarray(b.indices)[keep]]


def _ray_data_batches(split, batch):
    # A collate_fn: the images as a tensor, the paths (strings, which the default collation
    # refuses) as they are.
    import torch
    for images, paths in split.iter_torch_batches(
            batch_size=batch, collate_fn=lambda b: (torch.as_tensor(b["image"]), b["path"])):
        yield [str(p) for p in paths]


def order_digest(seen):
    return hashlib.sha256(repr(seen).encode()).hexdigest()[:12]


def main():
    a = parse()
    bench = Bench(a)
    names = a.pipelines.split(",")
    rates = {n: [] for n in names}
    orders = {n: set() for n in names}
    for r in range(a.rounds):
        for n in names:
            bench.epoch(n, 0)  # warm-up: producers, Ray Data's tasks, loaders started
            seconds, images, seen = bench.epoch(n, 1)  # the same epoch every round
            rates[n].append(images / seconds)
            orders[n].add(order_digest(seen))
            print(f"round {r} {n:11s} {images / seconds:8.1f} images/s "
                  f"({images} in {seconds:.2f} s)", flush=True)
    print(f"\nmedians over {a.rounds} rounds; {a.nodes} CPU nodes x {a.cpus_per_node} CPUs, "
          f"{a.ranks} ranks, batch {a.batch}, {len(bench.paths)} photos, size {a.size}, "
          f"{a.output}")
    base = statistics.median(rates["stoker"]) if "stoker" in rates else None
    for n in names:
        m = statistics.median(rates[n])
        line = (f"{n:11s} {m:8.1f} images/s  {m / bench.cores:7.1f} per core  "
                f"same order every run: {'yes' if len(orders[n]) == 1 else 'no'}")
        if base:
            line += f"  vs in-process stoker {m / base:.2f}"
        print(line)
    if a.kill:
        for n in names:
            if n == "stoker":
                continue
            print(f"{n}: {kill_a_node(bench, n, len(bench.paths))}", flush=True)


def kill_a_node(bench, name, total):
    """One epoch with a CPU node removed a third of the way in and a new one added."""
    steps = total // (bench.args.batch * bench.args.ranks)
    bench.epoch(name, 0)  # started, as in the rounds

    def kill():
        bench.cluster.remove_node(bench.nodes.pop(0), allow_graceful=False)
        bench.nodes.append(bench.add_node())
        if name == "stoker-ray":
            bench.pool.add(1)
    try:
        _, _, seen = bench.epoch(name, 2, at_step=steps // 3, action=kill)
    except Exception as e:  # what the trainer would see
        return f"the epoch failed: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
    counts = Counter(i for rank in seen for ids in rank for i in ids)
    missing = total - len(counts)
    duplicated = sum(c - 1 for c in counts.values())
    return f"after a node was killed: {missing} samples missing, {duplicated} duplicated"


if __name__ == "__main__":
    main()
