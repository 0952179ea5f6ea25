"""A training loop that checkpoints after every batch, for test_crash_resume.py.

usage: crash_worker.py DATA CHECKPOINT EPOCH BATCH
Runs epoch EPOCH of stoker.Loader(DATA, BATCH) and, after each batch, atomically replaces
CHECKPOINT with {"state": loader.state_dict(), "seen": [valid sample indices so far]}: the
state and the indices it covers are written together, so a kill at any instant leaves a
consistent pair. Prints "batch N" after each checkpoint; sleeps a little per batch, as a
training step would, so that the test can kill it mid-epoch.
"""
import json
import os
import sys
import time

import stoker

data, checkpoint, epoch, batch_size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
loader = stoker.Loader(data, batch_size, size=16, transform="train", threads=2, seed=11)
loader.set_epoch(epoch)
seen = []
for n, batch in enumerate(loader, 1):
    seen += batch.indices[batch.valid].tolist()
    tmp = checkpoint + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"state": loader.state_dict(), "seen": seen}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, checkpoint)
    print(f"batch {n}", flush=True)
    time.sleep(0.02)
print("done", flush=True)
