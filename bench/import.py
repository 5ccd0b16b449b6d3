"""Package import: time and peak memory.

Measures `Library.import_file` on `v5-all-features.siq` and on generated packages with
20 MB and 200 MB of media (incompressible, like real pictures and video). Each import runs
in a fresh child process so its peak resident memory (ru_maxrss) is its own; the floor, in
the same run, reads, hashes and writes the same archive's members and fsyncs once. Media are
streamed to disk, so the peak must not grow with media size (target: under 150 MB for
the 200 MB package). Prints a table, then JSON on the last line.

    .venv/bin/python bench/import.py [--keep DIR] [--sizes 20,200]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FIXTURE = ROOT.parent / "shared" / "fixtures" / "siq" / "v5-all-features.siq"
TARGET_MB = 150


def generate(path: Path, media_mb: int, files: int = 40) -> Path:
    """A v5 package whose questions each show one picture; written a chunk at a time."""
    size = media_mb * (1 << 20) // files
    def question(i: int) -> str:
        return (f'<question price="{100 * (i % 5 + 1)}"><params><param name="question" '
                f'type="content"><item>Что на картинке {i}?</item><item type="image" '
                f'isRef="True">p{i}.jpg</item></param></params><right><answer>ответ {i}'
                f"</answer></right></question>")

    themes = "".join(  # five questions a theme: packages are bounded (appliance/packages)
        f'<theme name="Картинки {t + 1}"><questions>'
        + "".join(question(i) for i in range(t * 5, min(files, t * 5 + 5)))
        + "</questions></theme>" for t in range((files + 4) // 5))
    xml = (f'<?xml version="1.0" encoding="utf-8"?><package name="bench {media_mb} MB" '
           f'version="5"><rounds><round name="1"><themes>{themes}</themes></round></rounds>'
           f"</package>")
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("content.xml", xml)
        for i in range(files):
            with z.open(zipfile.ZipInfo(f"Images/p{i}.jpg"), "w", force_zip64=True) as f:
                left = size
                while left:
                    n = min(left, 1 << 20)
                    f.write(os.urandom(n))
                    left -= n
    return path


def child(package: str, data: str) -> None:
    """Import once and report this process's time and peak memory."""
    import tracemalloc

    from appliance.packages.library import Library

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    t0 = time.perf_counter()
    pid = Library(data).import_file(package)
    seconds = time.perf_counter() - t0
    _, py_peak = tracemalloc.get_traced_memory()
    info = Library(data).info(pid)
    print(json.dumps({
        "seconds": round(seconds, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rss_before_import_mb": round(base / 1024, 1),
        "python_peak_mb": round(py_peak / (1 << 20), 2),
        "media_mb": round(info.media_bytes / (1 << 20), 1),
        "questions": info.questions,
    }))


def bare_copy_s(package: Path, work: Path) -> float:
    """The floor: read every member of the archive, hash it and write it to one file, then
    fsync (what an import must do at least), in this process."""
    out = work / "floor.bin"
    t0 = time.perf_counter()
    with zipfile.ZipFile(package) as z, out.open("wb") as f:
        for info in z.infolist():
            digest = hashlib.sha256()
            with z.open(info) as src:
                while chunk := src.read(1 << 20):
                    digest.update(chunk)
                    f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
    seconds = time.perf_counter() - t0
    out.unlink()
    return seconds


def measure(package: Path, work: Path) -> dict:
    data = work / f"data-{package.stem}"
    shutil.rmtree(data, ignore_errors=True)
    out = subprocess.run([sys.executable, __file__, "--child", str(package), str(data)],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    floor = bare_copy_s(package, work)
    result.update({"floor_s": round(floor, 3), "ratio_floor": round(result["seconds"] / floor, 2),
                   "load_average_1m": round(os.getloadavg()[0], 2)})
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", nargs=2, metavar=("PACKAGE", "DATA"), help=argparse.SUPPRESS)
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep the files")
    parser.add_argument("--sizes", default="20,200",
                        help="comma-separated MB of media of the generated packages")
    args = parser.parse_args()
    sizes = sorted(int(mb) for mb in args.sizes.split(","))
    if args.child:
        child(*args.child)
        return
    if not FIXTURE.is_file():
        raise SystemExit(f"fixture missing: {FIXTURE}")
    work = Path(args.keep or tempfile.mkdtemp(prefix="svoyak-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        results = {"v5-all-features": measure(FIXTURE, work)}
        for mb in sizes:
            pkg = generate(work / f"media-{mb}mb.siq", mb)
            results[f"generated-{mb}mb"] = measure(pkg, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{'package':<20} {'seconds':>8} {'floor s':>8} {'ratio':>6} {'peak RSS MB':>12} "
          f"{'python peak MB':>15} {'media MB':>9} {'load':>6}")
    for name, r in results.items():
        print(f"{name:<20} {r['seconds']:>8} {r['floor_s']:>8} {r['ratio_floor']:>6} "
              f"{r['peak_rss_mb']:>12} {r['python_peak_mb']:>15} {r['media_mb']:>9} "
              f"{r['load_average_1m']:>6}")
    small, big = results[f"generated-{sizes[0]}mb"], results[f"generated-{sizes[-1]}mb"]
    growth = big["peak_rss_mb"] - small["peak_rss_mb"]
    summary = {
        "bench": "package-import",
        "results": results,
        f"rss_growth_{sizes[0]}_to_{sizes[-1]}mb_mb": round(growth, 1),
        "target_peak_rss_mb": TARGET_MB,
        "target_met": big["peak_rss_mb"] < TARGET_MB,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
