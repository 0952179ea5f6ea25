"""The doctor's HTML report, opened in headless Chromium (Debian's chromium, installed by
run.sh): the page's script must run and draw every chart, and the pixels must show them."""

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import stoker
from PIL import Image

from conftest import stoker_bin


def pixels_of(image):
    """Every pixel of an image (Pillow 12 renamed getdata)."""
    flat = getattr(image, "get_flattened_data", None)
    return flat() if flat is not None else image.getdata()


def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.fail("chromium is not installed (run.sh test installs Debian's chromium)")
    return path


def browser(*args, timeout=120) -> str:
    # As root Chromium needs --no-sandbox; --virtual-time-budget lets the page's script finish.
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--virtual-time-budget=5000", *args]
    env = dict(os.environ, HOME=os.environ.get("HOME", "/tmp"))
    return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=timeout,
                          env=env).stdout


def test_capacity_report_renders_its_charts(small_set, tmp_path):
    page = tmp_path / "report.html"
    out = subprocess.run([str(stoker_bin()), "doctor", str(small_set), "--gpus", "3",
                          "--gpu-rate", "400", "--sample", "12", "--seconds", "0.2",
                          "--threads", "1", "--html", str(page), "--json"],
                         check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    assert page.exists()
    html = page.read_text()
    assert "<script" in html and "http://" not in html.replace("http://www.w3.org", "")

    dom = browser("--dump-dom", page.as_uri())
    assert 'data-rendered="2"' in dom
    assert dom.count('class="chart"') == 2
    # Bars: demand + 3 setups, for 1..3 GPUs; lines: one per setup.
    assert dom.count('class="bar"') == 4 * 3
    assert dom.count('<polyline') == 3
    assert f'>{report["verdict"]}<' in dom

    shot = tmp_path / "report.png"
    browser("--window-size=1100,1600", f"--screenshot={shot}", page.as_uri())
    image = Image.open(shot).convert("RGB")
    # The demand in grey, setup k in palette colour k in both charts.
    colours = {(0x15, 0x65, 0xC0), (0xC6, 0x28, 0x28), (0x2E, 0x7D, 0x32), (0x45, 0x5A, 0x64)}
    seen = {px for px in pixels_of(image) if px in colours}
    # Every series colour is on screen: the bars were painted, not only put in the DOM.
    assert seen == colours
    # One colour per setup across the charts: each line is the colour of its setup's bars.
    fills = re.findall(r'<g class="series" data-name="delivered: ([^"]+)"><rect[^>]* fill="([^"]+)"',
                       dom)
    strokes = dict((name, colour) for colour, name in re.findall(
        r'<polyline [^>]*stroke="([^"]+)"[^>]*data-name="([^"]+)"', dom))
    assert len(fills) == 3 and all(strokes[name] == fill for name, fill in fills)
    # GPU counts as whole-number ticks.
    assert re.search(r'>1\.5<|>1\.25<|>2\.5<', dom) is None
    # The numbers as a table (a header and one row per setup, with the cores each needs) and
    # the run's metadata.
    table = re.search(r'<table id="numbers">(.*?)</table>', dom, re.S).group(1)
    assert table.count("<tr>") == 4 and "cores to feed 3 GPUs" in table
    meta = re.search(r'<dl id="metadata">(.*?)</dl>', dom, re.S).group(1)
    for key in ("date", "host", "CPU", "cores", "stoker", "command"):
        assert f"<dt>{key}</dt>" in meta
    assert stoker.__version__ in meta and "--gpu-rate 400" in meta


def test_telemetry_report_charts_each_gpu_and_the_cpus(tmp_path):
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "telemetry"
    page = tmp_path / "telemetry.html"
    out = subprocess.run([str(stoker_bin()), "doctor", "--telemetry",
                          str(fixtures / "input_bound_gpu.csv"),
                          str(fixtures / "input_bound_mpstat.txt"), "--html", str(page), "--json"],
                         check=True, capture_output=True, text=True).stdout
    assert json.loads(out)["verdict"] == "input-bound-cpu"
    dom = browser("--dump-dom", page.as_uri())
    assert 'data-rendered="1"' in dom
    # GPU 0, GPU 1, CPU busy, CPU iowait: one drawn line each, with a point per sample.
    assert dom.count("<polyline") == 4
    assert '>input-bound-cpu<' in dom
    shot = tmp_path / "telemetry.png"
    browser("--window-size=1100,1400", f"--screenshot={shot}", page.as_uri())
    pixels = set(pixels_of(Image.open(shot).convert("RGB")))
    assert {(0x15, 0x65, 0xC0), (0xC6, 0x28, 0x28), (0x2E, 0x7D, 0x32), (0xEF, 0x6C, 0x00)} <= pixels


def test_capacity_plans_cpu_nodes_from_the_rate_per_core(small_set):
    """With --cpu-node-cores, a machine that cannot feed its GPUs is told how many CPU-only
    nodes (stoker.ray producers) make up the difference, from its own measured rate per core."""
    out = subprocess.run([str(stoker_bin()), "doctor", str(small_set), "--gpus", "8",
                          "--gpu-rate", "100000", "--sample", "12", "--seconds", "0.2",
                          "--threads", "1", "--no-fixes", "--cpu-node-cores", "16", "--json"],
                         check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    assert report["verdict"] == "input-bound-cpu"
    here = report["capacity"]["setups"][0]["images_per_second"]
    per_core = here / report["capacity"]["threads"]
    nodes = math.ceil((8 * 100000 - here) / (per_core * 16))
    actions = [f["action"] for f in report["fixes"]]
    assert f"{nodes} CPU-only nodes of 16 cores beside the GPUs, decoding with stoker.ray " \
           "(docs/ray.md)" in actions, actions
