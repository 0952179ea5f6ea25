// The doctor's fix lists (fixes.h).
#include "diagnose/fixes.h"

#include <utility>

namespace stoker::fixes {

Fix unmeasured(std::string action, std::string reason, std::string note) {
  Fix fix;
  fix.action = std::move(action);
  fix.reason = std::move(reason);
  fix.measured_on = std::move(note);
  return fix;
}

std::vector<Fix> input_bound_cpu() {
  return {
      unmeasured("stoker pack DATA OUT --mode jpeg --max-side 256",
                 "decoding 256-pixel JPEGs costs a fraction of full-size photos",
                 "estimate; `stoker doctor DATA` measures it on your data"),
      unmeasured("stoker pack DATA OUT --mode raw --max-side 256",
                 "raw pixels skip decoding: the CPU only copies and augments",
                 "estimate; `stoker doctor DATA` measures it on your data"),
      unmeasured("GPU augmentation (device='cuda', --device cuda)",
                 "the CPU only decodes; crop, resize and normalise run on the GPU",
                 "estimate; needs a CUDA build and a GPU"),
      unmeasured("more cores per rank (threads = cores / ranks on the node)",
                 "the pool is saturated: throughput grows with cores", ""),
  };
}

std::vector<Fix> io_bound() {
  return {
      unmeasured("stoker pack DATA OUT --mode jpeg --max-side 256",
                 "few large shards read sequentially instead of many small files; fewer bytes",
                 "estimate; `stoker doctor DATA` measures it on your data"),
      unmeasured("copy the data set to local NVMe or RAM (page cache) before training",
                 "the workers wait on storage, not on the CPU", ""),
      unmeasured("more threads than cores (e.g. --threads 2x cores) to overlap reads",
                 "blocked reads leave cores idle", ""),
  };
}

std::vector<Fix> rank_imbalance() {
  return {
      unmeasured("give each rank its own share: stoker.Loader (shards by rank) or "
                 "torch.utils.data.DistributedSampler with set_epoch",
                 "an unsharded loader makes every rank read the same samples, or leaves the "
                 "work on one",
                 ""),
      unmeasured("DistributedDataParallel with one process per GPU (torchrun) instead of "
                 "torch.nn.DataParallel",
                 "DataParallel funnels every batch and the gradients through GPU 0", ""),
      unmeasured("check that every rank sees its GPU (CUDA_VISIBLE_DEVICES, "
                 "torch.cuda.set_device(local_rank))",
                 "ranks that all pick cuda:0 share one GPU while the others idle", ""),
  };
}

std::vector<Fix> straggler() {
  return {
      unmeasured("equal cores per rank: threads = cores / ranks on the node (stoker's default)",
                 "a rank with fewer cores decodes slower and the others wait for it", ""),
      unmeasured("compare the slow rank's node: other jobs (top), storage, CPU throttling",
                 "the same code on the same data should run at the same rate", ""),
      unmeasured("stoker pack DATA OUT --mode jpeg --max-side 256",
                 "cheaper samples shrink the gap and the wait",
                 "estimate; `stoker doctor DATA` measures it on your data"),
  };
}

std::vector<Fix> communication_bound() {
  return {
      unmeasured("larger batch per GPU, or gradient accumulation (no_sync) over several steps",
                 "fewer all-reduces per image", ""),
      unmeasured("let DDP overlap communication with backward (bucket_cap_mb; "
                 "gradient_as_bucket_view=True) and reduce in bf16/fp16 (comm hooks)",
                 "less traffic per step, hidden behind compute", ""),
      unmeasured("check the topology: nvidia-smi topo -m; NCCL_DEBUG=INFO shows whether NCCL "
                 "uses NVLink/P2P or falls back to PCIe through the host",
                 "GPUs stall together while the PCIe links are busy", ""),
  };
}

}  // namespace stoker::fixes
