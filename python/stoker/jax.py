"""stoker for JAX: batches as jax.Arrays sharded over the devices, one stoker rank per process.

    import jax, stoker.jax
    loader = stoker.jax.Loader("/data/train", batch_size=256)  # per process
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        for batch in loader:  # {"images", "labels", "valid"}: jax.Arrays
            state = train_step(state, batch["images"], batch["labels"], batch["valid"])

Each process is one rank of the loader (jax.process_index() of jax.process_count()): every
sample once per epoch over all processes, the same number of steps everywhere. Each process's
batch is split over its local devices along the batch axis and the global array (batch_size x
process_count rows) is made with ``jax.make_array_from_process_local_data``, sharded as
``NamedSharding(Mesh(jax.devices(), ("data",)), PartitionSpec("data"))`` unless a sharding is
given. Float images come channels-last ([B, H, W, C], JAX's layout) unless
``channels_last=False``; bfloat16 as jax's bfloat16. Every batch has the same shape (jit
compiles once): the sampler mode is 'exact' (the last batch is full, its padding slots False in
``valid``: weight the loss by it) or 'drop'. Labels are int32 (JAX's default integer).
``batch_size`` must be a multiple of the local device count. Needs jax (``pip install jax``);
torch is not needed.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, Optional

import jax
import numpy as np

import stoker

__all__ = ["Loader"]

_FIXED_SHAPE_MODES = ("exact", "drop")


class Loader:
    """A stoker.Loader whose batches are dicts of jax.Arrays (see the module docstring).

    Args:
      source, batch_size: as stoker.Loader; batch_size per process.
      sharding: a jax.sharding.Sharding for the global batch arrays (default: the batch axis
        over all devices).
      mode: 'exact' (default) or 'drop'; a fixed batch shape.
      loader_kwargs: any other stoker.Loader argument (transform, seed, threads, ...); rank
        and world_size come from jax.
    """

    def __init__(self, source, batch_size: int, *, sharding: Optional[Any] = None,
                 mode: str = "exact", channels_last: bool = True, **loader_kwargs: Any) -> None:
        if mode not in _FIXED_SHAPE_MODES:
            raise ValueError(f"stoker.jax.Loader: mode must be 'exact' or 'drop', one batch shape "
                             f"for jit (got {mode!r})")
        for key in ("rank", "world_size", "device", "drop_last"):
            if key in loader_kwargs:
                raise ValueError(f"stoker.jax.Loader: {key} comes from jax, not from an argument")
        local = jax.local_device_count()
        if isinstance(batch_size, int) and batch_size % local != 0:
            raise ValueError(f"stoker.jax.Loader: batch_size {batch_size} is not a multiple of "
                             f"the {local} local devices")
        if sharding is None:
            mesh = jax.sharding.Mesh(np.array(jax.devices()), ("data",))
            sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data"))
        self.sharding = sharding
        self.loader = stoker.Loader(source, batch_size, mode=mode, channels_last=channels_last,
                                    rank=jax.process_index(), world_size=jax.process_count(),
                                    **loader_kwargs)
        self.loader._numpy = True  # numpy views, no torch tensors in between

    def __iter__(self) -> Iterator[Dict[str, jax.Array]]:
        for batch in self.loader:
            local = {"images": batch.images, "labels": batch.labels.astype(np.int32),
                     "valid": batch.valid}
            yield {name: jax.make_array_from_process_local_data(self.sharding, array)
                   for name, array in local.items()}

    def __len__(self) -> int:
        return len(self.loader)

    def set_epoch(self, epoch: int) -> None:
        self.loader.set_epoch(epoch)

    def state_dict(self) -> Dict[str, Any]:
        return self.loader.state_dict()

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self.loader.load_state_dict(state)

    def close(self) -> None:
        self.loader.close()

    def __enter__(self) -> "Loader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
