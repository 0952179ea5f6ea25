"""One process of test_jax.py: stoker.jax.Loader on jax's CPU platform (the test sets
--xla_force_host_platform_device_count), checked against a plain stoker.Loader of the same
rank, which yields numpy arrays here (no torch in the JAX venv).

    python jax_worker.py DATA OUT PROCESS_ID NUM_PROCESSES PORT

Writes OUT (JSON): the valid dataset indices this process delivered, the steps, the global
shape and dtype of the images, and the valid count of every step summed over all devices by a
jitted function (a cross-process reduction when NUM_PROCESSES > 1).
"""

import json
import sys

import jax
import numpy as np

data, out, process_id, num_processes, port = sys.argv[1:6]
process_id, num_processes = int(process_id), int(num_processes)
if num_processes > 1:
    jax.distributed.initialize(f"127.0.0.1:{port}", num_processes, process_id)

import ml_dtypes  # noqa: E402
import stoker  # noqa: E402
import stoker.jax  # noqa: E402

BATCH = 16  # per process: 2 rows per local device
kwargs = dict(transform="eval", size=32, output="bfloat16", seed=1, threads=1)
loader = stoker.jax.Loader(data, BATCH, **kwargs)
plain = stoker.Loader(data, BATCH, mode="exact", channels_last=True, rank=process_id,
                      world_size=num_processes, **kwargs)
valid_sum = jax.jit(lambda valid: valid.astype(np.int32).sum())
result = {"indices": [], "steps": 0, "global_valid": []}
for got, want in zip(loader, plain):
    images = got["images"]
    assert isinstance(images, jax.Array) and images.dtype == jax.numpy.bfloat16
    assert want.images.dtype == ml_dtypes.bfloat16  # numpy's bfloat16, not int16 bits
    assert images.shape == (BATCH * num_processes, 32, 32, 3), images.shape
    assert len(images.addressable_shards) == jax.local_device_count()
    # This process's rows, in order over its devices, are the plain loader's batch.
    for name, expected in (("images", want.images), ("labels", want.labels.astype(np.int32)),
                           ("valid", want.valid)):
        shards = sorted(got[name].addressable_shards, key=lambda s: s.index[0].start)
        local = np.concatenate([np.asarray(s.data) for s in shards])
        assert local.dtype == expected.dtype, (name, local.dtype, expected.dtype)
        assert np.array_equal(local.view(np.uint8), expected.view(np.uint8)), name
    result["indices"] += [int(i) for i, ok in zip(want.indices, want.valid) if ok]
    result["global_valid"].append(int(valid_sum(got["valid"])))
    result["steps"] += 1
result["shape"] = list(images.shape)
result["np_asarray_is_images"] = bool(np.array_equal(np.asarray(want).view(np.uint8),
                                                      want.images.view(np.uint8)))
with open(out, "w") as f:
    json.dump(result, f)
