"""conftest.run_torchrun, the runner of the tests' torchrun jobs: a job that hangs fails its
test with where each process hung, and leaves no rank or DataLoader worker behind."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest

from conftest import run_torchrun, torchrun


def test_a_hung_job_fails_with_its_stacks_and_leaves_nothing_behind(tmp_path):
    job = tmp_path / "job.py"  # rank 1 waits in a DataLoader worker forever, rank 0 for it
    job.write_text(textwrap.dedent("""\
        import time
        import torch.distributed as dist
        import torch.utils.data

        class Stuck(torch.utils.data.Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                return worker_waits_forever()

        def worker_waits_forever():
            time.sleep(3600)

        dist.init_process_group("gloo")
        if dist.get_rank() == 1:
            next(iter(torch.utils.data.DataLoader(Stuck(), num_workers=1)))
        dist.barrier()
        """))
    with pytest.raises(AssertionError) as failure:
        run_torchrun([*torchrun(), "--standalone", "--nproc-per-node=2", str(job)], timeout=30,
                     env=dict(os.environ, OMP_NUM_THREADS="1"))
    message = str(failure.value)
    assert "did not finish within 30 s" in message
    assert "worker_waits_forever" in message  # the worker's stack
    assert "barrier" in message  # rank 0's
    # Nothing of the job is left: torchrun is gone, and no rank or worker was orphaned.
    torchrun_pid = int(re.search(r"\(torchrun pid (\d+)\)", message).group(1))
    assert not Path(f"/proc/{torchrun_pid}").exists()
    assert not [p for p in Path("/proc").glob("[0-9]*") if str(job) in _cmdline(p)]


def _cmdline(process: Path) -> str:
    try:
        return (process / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""
