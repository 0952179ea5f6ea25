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
        assert len(got) * batch == len(s)
        out.append(got)
    return out


@pytest.mark.parametrize("n,world,batch", [(37, 2, 4), (10, 3, 2), (5, 4, 3), (64, 4, 8)])
def test_exactly_once_on_equal_batch_counts(n, world, batch):
    ranks = epoch_of(n, world, batch)
    assert len({len(r) for r in ranks}) == 1  # the same number of steps on every rank
    valid = sorted(i for r in ranks for idx, v in r for i, ok in zip(idx, v) if ok)
    assert valid == list(range(n))
    # Every batch is full; only the last round holds padding.
    assert all(len(idx) == batch for r in ranks for idx, _ in r)


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
        plan_steps = len(s) // 5
        rest += [i for j in range(plan_steps)
                 for i, ok in zip(s.batch(j).indices.tolist(), s.batch(j).valid.tolist()) if ok]
        assert list(s)[:5] == s.batch(0).indices.tolist()
    assert sorted(taken + rest) == list(range(n))
    # Another epoch starts from its beginning; a foreign state is refused.
    three[0].set_epoch(4)
    assert len(three[0]) == 4 * 5
    with pytest.raises(ValueError, match="seed"):
        DistributedSampler(data, num_replicas=1, rank=0, seed=9).load_state_dict(state)


def test_masked_mean_over_the_sampler_batch_is_the_exact_mean():
    data = TensorDataset(torch.arange(10))
    s = DistributedSampler(data, num_replicas=1, rank=0, batch_size=4, shuffle=False)
    last = s.batch(len(s) // 4 - 1)  # samples 8, 9 and two padding slots
    loss = torch.tensor([1.0, 3.0, 100.0, 100.0])
    assert last.valid.tolist() == [True, True, False, False] and last.global_valid == 2
    assert float(stoker.torch.masked_mean(loss, last)) == 2.0


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
