"""PyTorch helpers for stoker batches."""

from __future__ import annotations

from typing import Optional

__all__ = ["masked_mean"]


# -- the device hand-off (stoker.Loader(device='cuda')) -----------------------------------------

def current_device() -> int:
    """torch's current CUDA device (0 when torch has no CUDA: the core then says why)."""
    import torch

    return torch.cuda.current_device() if torch.cuda.is_available() else 0


def current_stream(device: int) -> int:
    """torch's current stream on `device`, as the cudaStream_t integer the core takes."""
    import torch

    return torch.cuda.current_stream(device).cuda_stream


def device_tensors(images, labels, indices, valid, output: str, device: int):
    """Tensors of a device batch: `images` wraps the batch's device memory without a copy
    (its __cuda_array_interface__ owner stays alive with the tensor; freeing the tensor lets
    the core reuse the buffer after the work queued on the current stream so far). Labels and
    the valid mask are copied to the device on the current stream; indices stay on the host."""
    import torch

    target = torch.device("cuda", device)
    images = torch.as_tensor(images, device=target)
    if output == "bfloat16":
        images = images.view(torch.bfloat16)  # the bits travel as int16
    return (images, torch.from_numpy(labels).to(target), torch.from_numpy(indices),
            torch.from_numpy(valid).to(target))


def masked_mean(per_sample_loss, batch, world_size: Optional[int] = None):
    """The loss term whose DDP-averaged gradient is that of the exact global mean.

    Returns ``(loss * valid).sum() * W / global_valid`` for this rank, where ``valid`` is
    the batch's mask, ``global_valid`` = G the valid slots of this step over all ranks, and
    W the world size.

    Derivation. Let V_r be the valid slots of rank r at this step, so that G = sum_r |V_r|
    is the same number on every rank (the batch carries it; no communication needed). The
    exact mean over the step's samples is M = (1/G) * sum_r sum_{i in V_r} loss_i.
    DistributedDataParallel all-reduces gradients and divides by W, so rank r contributing
    L_r = (W / G) * sum_{i in V_r} loss_i gives the averaged gradient
    (1/W) * sum_r grad L_r = (1/G) * sum_r sum_{i in V_r} grad loss_i = grad M.
    Padding slots (duplicates that keep every rank in lockstep) count zero, so no sample
    counts twice; a rank whose batch is all padding contributes an exact zero (still
    connected to the graph, so DDP's all-reduce runs and nothing hangs); G >= 1 so nothing
    is divided by zero. The returned value on one rank is not M itself (M is the average of
    the W returned values); without DDP (W = 1) it is M.

    Invalid slots are zeroed with masked_fill rather than multiplied, so that a NaN or inf in
    a padding slot does not poison the sum.

    Args:
      per_sample_loss: [B] tensor, e.g. ``cross_entropy(logits, labels, reduction='none')``.
      batch: a stoker.Batch (needs ``valid``, ``global_valid`` and ``world_size``).
      world_size: overrides the batch's world size (default: the loader's, else the
        initialised torch.distributed group's, else 1).
    """
    import torch

    if per_sample_loss.dim() != 1 or per_sample_loss.shape[0] != batch.valid.shape[0]:
        raise ValueError(
            f"per_sample_loss must have shape [{batch.valid.shape[0]}] "
            f"(got {list(per_sample_loss.shape)}); use reduction='none'")
    if world_size is None:
        world_size = getattr(batch, "world_size", None)
    if world_size is None:
        dist = torch.distributed
        world_size = (dist.get_world_size()
                      if dist.is_available() and dist.is_initialized() else 1)
    global_valid = int(batch.global_valid)
    if global_valid < 1:
        raise ValueError(f"batch.global_valid must be >= 1 (got {global_valid}); "
                         "this mode has no valid sample at this step")
    valid = batch.valid.to(device=per_sample_loss.device, dtype=torch.bool)
    total = per_sample_loss.masked_fill(~valid, 0.0).sum()
    return total * (float(world_size) / float(global_valid))
