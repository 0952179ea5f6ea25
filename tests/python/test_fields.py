"""Per-sample fields (captions, metadata) from WebDataset shards written by webdataset's own
ShardWriter: every image arrives with its own caption and metadata, over 2 ranks, exactly once
per epoch, shuffled, and after a mid-epoch resume (docs/fields.md)."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import stoker
from conftest import stoker_bin

webdataset = pytest.importorskip("webdataset")

N = 50
LEVEL = 5  # sample i is a flat grey image of level i * LEVEL: its pixels say which it is


def caption(i: int) -> str:
    return f"a grey square, number {i} — «{i * LEVEL}»"  # non-ASCII on purpose


def write_shards(out: Path, skip_caption_of: int = -1) -> str:
    out.mkdir(parents=True, exist_ok=True)
    with webdataset.ShardWriter(str(out / "pairs-%04d.tar"), maxcount=12) as sink:
        for i in range(N):
            buf = io.BytesIO()
            Image.new("RGB", (40 + i % 7, 36), (i * LEVEL,) * 3).save(buf, "JPEG", quality=95)
            sample = {"__key__": f"s{i:04d}", "jpg": buf.getvalue(),
                      "json": {"id": i, "similarity": i / 100, "url": f"http://x/{i}.jpg"}}
            if i != skip_caption_of:
                sample["txt"] = caption(i)
            sink.write(sample)
    shards = sorted(out.glob("pairs-*.tar"))
    assert len(shards) == 5
    return str(out / "pairs-{0000..0004}.tar")


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> str:
    return write_shards(tmp_path_factory.mktemp("fields") / "shards")


def loader(source, rank=0, world_size=1, **kw):
    kw.setdefault("fields", ["txt", "json", "json.similarity"])
    kw.setdefault("shuffle", True)
    return stoker.Loader(source, 8, transform="eval", size=32, output="uint8", seed=3, rank=rank,
                         world_size=world_size, threads=2, mode="exact", **kw)


def check_batch(batch, seen: dict) -> None:
    """Every valid slot: the image's grey level, the caption, the json and the selected key
    all name the same sample; records it in `seen`."""
    images = np.asarray(batch.images)
    for slot in range(batch.batch_size):
        if not bool(batch.valid[slot]):
            continue
        i = round(float(images[slot].mean()) / LEVEL)
        assert batch.fields["txt"][slot] == caption(i)
        meta = batch.fields["json"][slot]
        assert meta["id"] == i and meta["url"] == f"http://x/{i}.jpg"
        assert batch.fields["json.similarity"][slot] == pytest.approx(i / 100)
        assert int(batch.indices[slot]) not in seen, "a sample twice in one epoch"
        seen[int(batch.indices[slot])] = i


def test_every_image_arrives_with_its_own_fields_once_over_two_ranks(shards):
    seen: dict = {}
    orders = []
    for rank in (0, 1):
        with loader(shards, rank, 2) as ld:
            batches = list(ld)
            orders.append([int(v) for b in batches for v in b.indices])
            for b in batches:
                assert isinstance(b.fields["json.similarity"], np.ndarray)
                check_batch(b, seen)
    assert sorted(seen.values()) == list(range(N))  # every sample once over the ranks
    assert orders[0] != sorted(orders[0])  # shuffled


def test_a_resumed_epoch_keeps_fields_with_their_images(shards):
    seen: dict = {}
    with loader(shards) as first:
        it = iter(first)
        for _ in range(3):
            check_batch(next(it), seen)
        state = first.state_dict()
    with loader(shards) as resumed:
        resumed.load_state_dict(state)
        for b in resumed:
            check_batch(b, seen)
    assert sorted(seen.values()) == list(range(N))


def test_a_missing_member_is_a_bad_sample_named_by_key(tmp_path):
    source = write_shards(tmp_path / "shards", skip_caption_of=17)
    with pytest.raises(stoker.BadSampleError, match=r"s0017.*no \.txt member.*jpg,json"):
        with loader(source, fields=["txt"]) as ld:
            for _ in ld:
                pass
    seen: dict = {}
    with loader(source, fields=["txt", "json", "json.similarity"], bad_samples="skip") as ld:
        skipped = 0
        for b in ld:
            skipped += b.skipped
            check_batch(b, seen)
    assert skipped == 1 and sorted(seen.values()) == [i for i in range(N) if i != 17]


def test_fields_nobody_has_are_refused_at_construction(shards, tmp_path):
    with pytest.raises(stoker.ArgumentError, match="no field 'caption'"):
        loader(shards, fields=["caption"])
    with pytest.raises(stoker.ArgumentError, match="asked for twice"):
        loader(shards, fields=["txt", "txt"])
    folder = tmp_path / "folder" / "a"
    folder.mkdir(parents=True)
    Image.new("RGB", (8, 8)).save(folder / "x.jpg")
    with pytest.raises(stoker.ArgumentError, match="no field 'txt'"):
        loader(tmp_path / "folder", fields=["txt"])


def test_a_json_key_that_is_not_everywhere_is_named(tmp_path):
    out = tmp_path / "s"
    out.mkdir()
    with webdataset.ShardWriter(str(out / "x-%02d.tar"), maxcount=100) as sink:
        for i in range(4):
            buf = io.BytesIO()
            Image.new("RGB", (16, 16), (i * 40,) * 3).save(buf, "JPEG")
            meta = {"score": i} if i != 2 else {"other": 1}
            sink.write({"__key__": f"k{i}", "jpg": buf.getvalue(), "json": json.dumps(meta)})
    with pytest.raises(stoker.BadSampleError, match=r"k2.*has no 'score'"):
        with loader(str(out / "x-00.tar"), fields=["json.score"]) as ld:
            list(ld)


@pytest.fixture(scope="module")
def caption_csv(tmp_path_factory) -> Path:
    """The same grey squares as files, listed in a CSV with path, caption and a score."""
    root = tmp_path_factory.mktemp("csv")
    (root / "img").mkdir()
    rows = ["path,caption,score"]
    for i in range(N):
        Image.new("RGB", (40, 36), (i * LEVEL,) * 3).save(root / "img" / f"{i}.jpg", quality=95)
        text = caption(i).replace('"', '""')
        rows.append(f'img/{i}.jpg,"{text}, with a comma",{i / 100}')
    (root / "pairs.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root / "pairs.csv"


def check_csv_batch(batch, seen: dict) -> None:
    images = np.asarray(batch.images)
    for slot in range(batch.batch_size):
        if not bool(batch.valid[slot]):
            continue
        i = round(float(images[slot].mean()) / LEVEL)
        assert batch.fields["caption"][slot] == caption(i) + ", with a comma"
        assert batch.fields["score"][slot] == str(i / 100)
        assert int(batch.indices[slot]) not in seen
        seen[int(batch.indices[slot])] = i


def test_a_csv_with_captions_keeps_each_caption_with_its_image(caption_csv):
    seen: dict = {}
    for rank in (0, 1):
        with loader(caption_csv, rank, 2, fields=["caption", "score"]) as ld:
            for b in ld:
                check_csv_batch(b, seen)
    assert sorted(seen.values()) == list(range(N))
    seen = {}
    with loader(caption_csv, fields=["caption", "score"]) as first:
        it = iter(first)
        for _ in range(2):
            check_csv_batch(next(it), seen)
        state = first.state_dict()
    with loader(caption_csv, fields=["caption", "score"]) as resumed:
        resumed.load_state_dict(state)
        for b in resumed:
            check_csv_batch(b, seen)
    assert sorted(seen.values()) == list(range(N))
    # The fields are part of what the dataset is: another field set, another fingerprint.
    with loader(caption_csv, fields=["caption"]) as a, loader(caption_csv, fields=[]) as b:
        assert a.fingerprint != b.fingerprint


def test_json_lines_fields_and_what_a_list_cannot_give(tmp_path, caption_csv):
    root = caption_csv.parent
    lines = [json.dumps({"path": f"img/{i}.jpg", "text": caption(i), "meta": {"i": i}})
             for i in range(N) if i != 7]
    lines.insert(7, json.dumps({"path": "img/7.jpg", "meta": {"i": 7}}))  # no "text"
    (root / "pairs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with loader(root / "pairs.jsonl", fields=["text", "meta"], bad_samples="skip",
                shuffle=False) as ld:
        skipped = 0
        for b in ld:
            skipped += b.skipped
            for slot in range(b.batch_size):
                if bool(b.valid[slot]):
                    i = json.loads(b.fields["meta"][slot])["i"]
                    assert b.fields["text"][slot] == caption(i)
    assert skipped == 1  # line 8 has no "text": a bad sample, named
    with pytest.raises(stoker.ArgumentError, match="no column 'alt' for the field"):
        loader(caption_csv, fields=["alt"])
    tsv = root / "legacy.txt"
    tsv.write_text("img/0.jpg\t0\n")
    with pytest.raises(stoker.ArgumentError, match="headerless"):
        loader(tsv, fields=["caption"])


def test_a_metadata_filter_runs_before_decode_and_the_sampler_sees_only_what_passes(shards,
                                                                                   caption_csv):
    want = [i for i in range(N) if i / 100 >= 0.28]
    seen: dict = {}
    fingerprints = set()
    for rank in (0, 1):
        with loader(shards, rank, 2, where={"json.similarity": (">=", 0.28)}) as ld:
            assert ld.filtered == N - len(want) and len(ld.dataset) == len(want)
            fingerprints.add(ld.fingerprint)
            for b in ld:
                check_batch(b, seen)
    assert sorted(seen.values()) == want  # each kept sample once over the ranks
    with loader(shards) as plain:
        assert plain.filtered == 0 and plain.fingerprint not in fingerprints
    # Strings compare as strings; a list's columns filter too; a bare value means ==.
    with loader(caption_csv, fields=["caption", "score"], where={"score": ("<", 0.05)}) as ld:
        assert len(ld.dataset) == 5
    with loader(shards, where={"json.url": "http://x/3.jpg"}, fields=["txt"]) as ld:
        assert len(ld.dataset) == 1
        assert next(iter(ld)).fields["txt"][0] == caption(3)
    with pytest.raises(ValueError, match="'~=' is not one of"):
        loader(shards, where={"json.similarity": ("~=", 1)})
    with pytest.raises(stoker.ArgumentError, match="no sample of .* passes"):
        loader(shards, where={"json.similarity": (">", 5)})


def test_a_tokenizer_gives_ids_and_masks_per_batch_off_the_training_thread(shards, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator([caption(i) for i in range(N)],
                            trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]"]))
    tok.save(str(tmp_path / "tokenizer.json"))
    for given in (tok, tmp_path / "tokenizer.json"):
        seen = 0
        with loader(shards, fields=["txt", "json"], tokenizer=given, context_length=6) as ld:
            for b in ld:
                ids, mask = b.fields["txt"], b.fields["txt.attention_mask"]
                assert tuple(ids.shape) == (8, 6) and str(ids.dtype).endswith("int32")
                for slot, text in enumerate(b.fields["txt.text"]):
                    want = tok.encode(text).ids[:6]
                    assert [int(v) for v in ids[slot][:len(want)]] == want
                    assert int(mask[slot].sum()) == len(want)
                    assert all(int(v) == tok.token_to_id("[PAD]") for v in ids[slot][len(want):])
                seen += 1
            assert seen == len(ld)
    with pytest.raises(ValueError, match="no text field"):
        loader(shards, fields=["json"], tokenizer=tok)


def pack(source, out: Path, fields: str, *extra: str) -> dict:
    """`stoker pack SOURCE OUT --fields FIELDS`, then `verify` and `inspect --json`."""
    subprocess.run([str(stoker_bin()), "pack", str(source), str(out), "--fields", fields,
                    *extra], check=True, capture_output=True)
    subprocess.run([str(stoker_bin()), "verify", str(out)], check=True, capture_output=True)
    return json.loads(subprocess.run([str(stoker_bin()), "inspect", str(out), "--json"],
                                     check=True, capture_output=True, text=True).stdout)


def test_a_pack_with_captions_verifies_and_reads_back_every_field(shards, caption_csv,
                                                                  tmp_path):
    """Packs (format version 2) of the ShardWriter shards and of the caption CSV keep each
    sample's fields: over 2 ranks, shuffled, across a resume, exactly once (docs/format.md)."""
    info = pack(shards, tmp_path / "wds", "txt,json", "--mode", "jpeg", "--max-side", "32",
                "--shard-size", "8kb")
    assert info["version"] == 2 and len(info["shards"]) > 1
    assert [(f["name"], f["kind"]) for f in info["fields"]] == [("txt", "text"),
                                                                 ("json", "json")]
    assert info["fields"][0]["first_record"] == caption(0)
    seen: dict = {}
    for rank in (0, 1):
        with loader(tmp_path / "wds", rank, 2) as ld:  # txt, json and json.similarity
            for b in ld:
                check_batch(b, seen)
    assert sorted(seen.values()) == list(range(N))
    seen = {}
    with loader(tmp_path / "wds") as first:
        it = iter(first)
        for _ in range(2):
            check_batch(next(it), seen)
        state = first.state_dict()
    with loader(tmp_path / "wds") as resumed:
        resumed.load_state_dict(state)
        for b in resumed:
            check_batch(b, seen)
    assert sorted(seen.values()) == list(range(N))
    # A filter and a tokenizer-free text field work on the pack as on the shards.
    with loader(tmp_path / "wds", where={"json.similarity": (">=", 0.28)}) as ld:
        assert len(ld.dataset) == N - 28

    info = pack(caption_csv, tmp_path / "csv", "caption,score")
    assert info["classes"] == [] and info["fields"][1]["kind"] == "text"
    seen = {}
    for rank in (0, 1):
        with loader(tmp_path / "csv", rank, 2, fields=["caption", "score"]) as ld:
            for b in ld:
                assert all(int(v) == -1 for v in b.labels)  # a label-free list stays so
                check_csv_batch(b, seen)
    assert sorted(seen.values()) == list(range(N))
