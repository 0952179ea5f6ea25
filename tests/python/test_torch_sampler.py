"""stoker.torch.DistributedSampler: stoker's sharding for any map-style Dataset."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import stoker.torch
from stoker.torch import DistributedSampler, _sampler_record, analyse_audit


def epoch_of(n, world, batch, epoch=0, **kw):
    """[(indices, valid)] per rank of one epoch, through a DataLoader as a job runs it."""
    data = TensorDataset(torch.arange(n))
    out = []
    for rank in range(world):
        s = DistributedSampler(data, num_replicas=world, rank=rank, batch_size=batch, **kw)
        s.set_epoch(epoch)
        loader = DataLoader(data, batch_size=batch, sampler=s)
        got = [(x.tolist(), s.batch(step).valid.tolist())
               for step, (x,) in enumerate(loader)]
        assert sum(len(idx) for idx, _ in got) == len(s)
        assert all(len(idx) == len(v) for idx, v in got)
        out.append(got)
    return out


@pytest.mark.parametrize("n,world,batch", [(37, 2, 4), (10, 3, 2), (64, 4, 8), (44, 4, 5)])
def test_exactly_once_on_equal_batch_counts_without_the_mask(n, world, batch):
    """What the DataLoader delivers is each sample once: the loop needs no change."""
    ranks = epoch_of(n, world, batch)
    assert len({len(r) for r in ranks}) == 1  # the same number of steps on every rank
    delivered = sorted(i for r in ranks for idx, _ in r for i in idx)
    assert delivered == list(range(n))
    assert all(all(v) for r in ranks for _, v in r)
    # Every batch is full but the last.
    assert all(len(idx) == batch for r in ranks for idx, _ in r[:-1])


def test_a_rank_whose_last_batch_would_be_empty_gets_one_masked_repeat():
    # 17 samples, 2 ranks, batch 8: rank 0 has 9 (two batches), rank 1 only 8: its second
    # batch holds one repeated sample, marked invalid.
    ranks = epoch_of(17, 2, 8)
    assert [len(r) for r in ranks] == [2, 2]
    (idx, valid), = [b for b in ranks[1][1:]]
    assert len(idx) == 1 and valid == [False]
    taken = sorted(i for r in ranks for idx, v in r for i, ok in zip(idx, v) if ok)
    assert taken == list(range(17))


def test_epochs_reshuffle_and_are_the_same_on_every_rank():
    a = epoch_of(37, 2, 4, epoch=0)
    b = epoch_of(37, 2, 4, epoch=1)
    assert a != b and a == epoch_of(37, 2, 4, epoch=0)
    assert [idx for idx, _ in epoch_of(37, 2, 4, shuffle=False)[0]][0] == [0, 2, 4, 6]


def test_pad_and_drop_modes_count_as_torch():
    data = TensorDataset(torch.arange(37))
    for drop_last in (False, True):
        ours = DistributedSampler(data, num_replicas=2, rank=1, batch_size=1,
                                  drop_last=drop_last, mode=None if drop_last else "pad")
        theirs = torch.utils.data.DistributedSampler(data, num_replicas=2, rank=1,
                                                     drop_last=drop_last)
        assert len(ours) == len(theirs), drop_last
    assert isinstance(ours, torch.utils.data.DistributedSampler)


def test_resume_on_another_world_size_takes_the_rest_exactly_once():
    n, data = 50, TensorDataset(torch.arange(50))
    two = [DistributedSampler(data, num_replicas=2, rank=r, batch_size=4) for r in range(2)]
    for s in two:
        s.set_epoch(3)
    steps = 3
    taken = [i for s in two for j in range(steps)
             for i, ok in zip(s.batch(j).indices.tolist(), s.batch(j).valid.tolist()) if ok]
    state = two[0].state_dict(steps)
    assert state == two[1].state_dict(steps) and state["epoch"] == 3
    three = [DistributedSampler(data, num_replicas=3, rank=r, batch_size=5) for r in range(3)]
    rest = []
    for s in three:
        s.load_state_dict(state)
        plan_steps = -(-len(s) // 5)
        rest += [i for j in range(plan_steps)
                 for i, ok in zip(s.batch(j).indices.tolist(), s.batch(j).valid.tolist()) if ok]
        assert list(s)[:5] == s.batch(0).indices.tolist()
    assert sorted(taken + rest) == list(range(n))
    # Another epoch starts from its beginning; a foreign state is refused.
    three[0].set_epoch(4)
    assert len(three[0]) == 17  # 50 samples over 3 ranks: 17, 17, 16
    with pytest.raises(ValueError, match="seed"):
        DistributedSampler(data, num_replicas=1, rank=0, seed=9).load_state_dict(state)


def test_masked_mean_over_the_sampler_batch_is_the_exact_mean():
    data = TensorDataset(torch.arange(10))
    s = DistributedSampler(data, num_replicas=2, rank=1, batch_size=4, shuffle=False)
    s17 = DistributedSampler(TensorDataset(torch.arange(17)), num_replicas=2, rank=1,
                             batch_size=8, shuffle=False)
    last = s.batch(1)  # rank 1's samples 9 (its second batch: 1 of the step's 2)
    assert last.indices.tolist() == [9] and last.global_valid == 2
    repeat = s17.batch(1)  # one repeated sample, invalid: contributes zero
    loss = torch.tensor([100.0])
    assert repeat.global_valid == 1 and float(stoker.torch.masked_mean(loss, repeat)) == 0.0


def test_audit_judges_the_shards_of_a_dataloader_with_this_sampler():
    data = TensorDataset(torch.arange(37))

    def records(seeds):
        out = []
        for rank, seed in enumerate(seeds):
            s = DistributedSampler(data, num_replicas=2, rank=rank, batch_size=4, seed=seed)
            out.append(_sampler_record(DataLoader(data, batch_size=4, sampler=s), s))
        return out

    good = analyse_audit(records([5, 5]))
    assert good["verdict"] == "healthy", good
    assert good["checks"] == {"disjoint": True, "complete": True, "balanced": True}
    bad = analyse_audit(records([5, 6]))
    assert bad["verdict"] == "rank-imbalance" and bad["checks"]["disjoint"] is False
    s = DistributedSampler(data, num_replicas=1, rank=0, batch_size=4)
    with pytest.raises(ValueError, match="batch_size 8"):
        _sampler_record(DataLoader(data, batch_size=8, sampler=s), s)
