#!/usr/bin/python3
"""The status page (GET /) in a real browser: headless Chromium from Debian.

Starts the real `wattcut serve` on 127.0.0.1 (any free port), registers a job with a long,
distinctive name, uploads a real profile, waits for its frontier, reports a straggler and
some training steps (so that the page shows a frontier chart, a non-straggler plan and an
energy saving), then:
  * `chromium --headless --dump-dom` of http://127.0.0.1:PORT/ holds the job's name, the
    chart (<svg>) and the saving;
  * `chromium --headless --screenshot` gives a PNG that is not blank: decoded here (zlib, the
    PNG row filters), enough pixels differ from the background, it has many colours, and the
    frontier line's blue (#1f77b4) is drawn;
  * tesseract (OCR) reads the job's name off the screenshot's top (the first OCR_ROWS rows,
    cropped here: OCR of the whole page takes several times as long).
Chromium's GPU/dbus noise on stderr is ignored; a missing screenshot fails.

  status_page_browser_test.py --wattcut BIN --profile CSV [--save-screenshot PNG] [--save-text TXT]
"""

import argparse
import collections
import html
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib

JOB_NAME = "gpt3-175b-statuspage-probe"
DP_DEGREE = 4
MICROBATCHES = 12
P2P_POWER_W = 83.64  # the A100's blocking power, as docs/server.md's GPT-3 example uses
FRONTIER_BLUE = (0x1F, 0x77, 0xB4)
OCR_ROWS = 320  # the page's top, in screenshot pixels: the header and the first job's name


class Failure(Exception):
    pass


def request(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req) as reply:
            text = reply.read().decode()
    except urllib.error.HTTPError as e:
        raise Failure(f"{method} {path}: HTTP {e.code}: {e.read().decode(errors='replace')}")
    return json.loads(text) if text else None


def start_server(wattcut, data_dir, log_path):
    log = open(log_path, "w")
    server = subprocess.Popen([wattcut, "serve", "--listen", "127.0.0.1:0", "--data-dir", data_dir],
                              stdout=log, stderr=subprocess.STDOUT)
    log.close()
    for _ in range(3000):  # 20 ms apart: at most a minute until it listens
        with open(log_path) as f:
            match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", f.read())
        if match or server.poll() is not None:
            break
        time.sleep(0.02)
    if not match:
        server.kill()
        server.wait()
        with open(log_path) as f:
            raise Failure(f"wattcut serve did not start: {f.read()}")
    return server, match.group(1)


def create_job(base, profile_csv):
    stages = len({line.split(",")[0] for line in profile_csv.splitlines()[1:] if line})
    world = stages * DP_DEGREE
    job_id = request(base, "POST", "/register_job", {
        "pp_degree": stages, "dp_degree": DP_DEGREE, "tp_degree": 1, "world_size": world,
        "job_metadata": JOB_NAME,
        "planner": {"num_microbatches": MICROBATCHES, "p2p_power_w": P2P_POWER_W}})
    path = "/v1/jobs/" + urllib.parse.quote(job_id, safe="")
    freqs = sorted({int(line.split(",")[2]) for line in profile_csv.splitlines()[1:] if line})
    for rank in range(world):
        request(base, "POST", "/register_rank/" + urllib.parse.quote(job_id, safe=""), {
            "rank": rank, "dp_rank": rank // stages, "pp_rank": rank % stages, "tp_rank": 0,
            "available_frequencies": freqs})
    request(base, "PUT", path + "/profile", {"csv": profile_csv})
    for _ in range(3000):  # 20 ms apart: at most a minute of polls
        state = request(base, "GET", path + "/frontier")["state"]
        if state in ("ready", "failed"):
            break
        time.sleep(0.02)
    if state != "ready":
        raise Failure(f"the frontier is {state}: {request(base, 'GET', path + '/frontier')}")
    request(base, "POST", path + "/stragglers", {"dp_rank": 1, "slowdown": 1.15})
    # Every rank reports step 0, then 500 steps later: the page counts 500 steps' saving.
    for step in (0, 500):
        for rank in range(world):
            request(base, "GET", f"{path}/deployment?rank={rank}&step={step}&version=0")
    return job_id


def visible_text(page):
    """What the page shows, one line per block, the chart's labels included, with what differs from
    run to run masked: the job id's time, the server's uptime, the frontier's computing time."""
    page = re.sub(r"<(style|script)\b.*?</\1>", "", page, flags=re.S)
    page = re.sub(r"<br\s*/?>|</(p|div|h[1-6]|tr|li|table|svg|text|title)>", "\n", page)
    page = re.sub(r"<[^>]+>", " ", page)
    page = html.unescape(page)
    page = re.sub(r"\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\+", "YYYY-MM-DD-hh-mm-ss+", page)
    page = re.sub(r"\bup [0-9.]+ (s|min|h|d)\b", "up ...", page)
    page = re.sub(r"computed in [0-9.]+ s", "computed in ... s", page)
    lines = (" ".join(line.split()) for line in page.split("\n"))
    return "\n".join(line for line in lines if line) + "\n"


def chromium(args, user_dir):
    browser = shutil.which("chromium")
    if browser is None:
        raise Failure("chromium is not installed (scripts/install-deps.sh installs it)")
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--no-first-run", "--user-data-dir=" + user_dir] + args
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return result


def decode_png(data):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise Failure("the screenshot is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace != 0:
        raise Failure(f"unexpected PNG format: depth {depth}, colour type {color}, interlace {interlace}")
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    rows = []
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, previous))
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = previous[i]
                c = previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif kind != 0:
            raise Failure(f"row {y}: unknown PNG filter {kind}")
        rows.append(bytes(line) if channels == 3 else bytes(b for i, b in enumerate(line) if i % 4 != 3))
        previous = line
    return width, height, rows


def encode_png(width, rows):
    """An 8-bit RGB PNG of `rows` (bytes of RGB pixels, each row unfiltered)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", width, len(rows), 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + row for row in rows))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def check_pixels(png_path):
    """Checks the screenshot is not blank; returns its width and rows (RGB bytes)."""
    with open(png_path, "rb") as f:
        width, height, rows = decode_png(f.read())
    counts = collections.Counter()
    for row in rows:
        counts.update(zip(row[0::3], row[1::3], row[2::3]))
    background, background_count = max(counts.items(), key=lambda item: item[1])
    total = width * height
    drawn = total - background_count
    near_blue = sum(n for (r, g, b), n in counts.items()
                    if abs(r - FRONTIER_BLUE[0]) + abs(g - FRONTIER_BLUE[1]) + abs(b - FRONTIER_BLUE[2]) <= 24)
    print(f"screenshot {width}x{height}: background {background}, {drawn} other pixels "
          f"({100.0 * drawn / total:.1f} %), {len(counts)} colours, {near_blue} frontier-blue pixels")
    if drawn < total // 50:
        raise Failure(f"the screenshot is nearly blank: {drawn} of {total} pixels differ from the background")
    if len(counts) < 16:
        raise Failure(f"the screenshot has only {len(counts)} colours")
    if near_blue < 100:
        raise Failure(f"the frontier line (#1f77b4) is not drawn: {near_blue} pixels of its colour")
    return width, rows


def check_ocr(width, rows, work):
    """OCR of the page's top (the server line and the first job's heading) finds the name."""
    if shutil.which("tesseract") is None:
        raise Failure("tesseract is not installed (scripts/install-deps.sh installs tesseract-ocr)")
    top = os.path.join(work, "top.png")
    with open(top, "wb") as f:
        f.write(encode_png(width, rows[:OCR_ROWS]))
    # One thread: faster than tesseract's OpenMP threads on a busy 2-core machine.
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    result = subprocess.run(["tesseract", top, "stdout", "-l", "eng", "--psm", "3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if result.returncode != 0:
        raise Failure(f"tesseract failed: {result.stderr}")
    text = re.sub(r"\s+", "", result.stdout).lower()
    if JOB_NAME not in text:
        raise Failure(f"OCR did not find the job name {JOB_NAME!r} in the screenshot; it read:\n{result.stdout}")
    print(f"OCR read the job name {JOB_NAME!r} off the screenshot")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--wattcut", required=True)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--save-screenshot", help="also copy the screenshot here")
    parser.add_argument("--save-text", help="also write what the page shows here, as text (scripts/docs_images.py)")
    parser.add_argument("--window-size", default="1100,1500")
    args = parser.parse_args()
    if not os.path.exists(args.profile):
        raise Failure(f"{args.profile}: no such profile (the shared data folder, WATTCUT_SHARED_DIR)")
    with open(args.profile) as f:
        profile_csv = f.read()

    work = tempfile.mkdtemp(prefix="wattcut_status_page_")
    server = None
    try:
        server, base = start_server(args.wattcut, os.path.join(work, "data"), os.path.join(work, "serve.log"))
        job_id = create_job(base, profile_csv)
        print(f"job {job_id} planned on {base}")

        dom = chromium(["--dump-dom", base + "/"], os.path.join(work, "chromium-dom"))
        for needed in (f'<h2 class="job-name">{JOB_NAME}</h2>', "<svg", "Energy saved against AllMax",
                       "non-straggler plan"):
            if needed not in dom.stdout:
                raise Failure(f"the page Chromium loaded lacks {needed!r}; stderr:\n{dom.stderr[-2000:]}")

        png = os.path.join(work, "status.png")
        shot = chromium(["--screenshot=" + png, "--window-size=" + args.window_size, base + "/"],
                        os.path.join(work, "chromium-shot"))
        if not os.path.exists(png) or os.path.getsize(png) == 0:
            raise Failure(f"chromium wrote no screenshot (exit {shot.returncode}); stderr:\n{shot.stderr[-2000:]}")
        if args.save_screenshot:
            shutil.copyfile(png, args.save_screenshot)
        if args.save_text:
            with urllib.request.urlopen(base + "/") as reply, open(args.save_text, "w") as out:
                out.write(visible_text(reply.read().decode()))
        width, rows = check_pixels(png)
        check_ocr(width, rows, work)
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            server.wait()
        shutil.rmtree(work, ignore_errors=True)
    print("status page browser test: ok")


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
