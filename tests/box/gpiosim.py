"""The virtual GPIO chip: gpio-sim, built out of tree from Debian's kernel source.

Debian's kernels set neither CONFIG_GPIO_SIM nor CONFIG_IRQ_SIM, so the test builds
drivers/gpio/gpio-sim.c and kernel/irq/irq_sim.c (with drivers/gpio/gpiolib.h) from the
`linux-source-6.1` tarball as one module against `linux-headers-KVER`. One change: irq_sim
calls `irq_to_desc`, which the kernel does not export to modules, as
`handle_simple_irq(irq_to_desc(n))`; `generic_handle_irq(n)` does the same through the
descriptor's handler (irq_sim sets it to handle_simple_irq). BOOT-TEST.md has the facts.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import image

SOURCES = {
    "drivers/gpio/gpio-sim.c": "gpio-sim-core.c",
    "drivers/gpio/gpiolib.h": "gpiolib.h",
    "kernel/irq/irq_sim.c": "irq_sim.c",
}
PATCH = ("handle_simple_irq(irq_to_desc(irqnum));", "generic_handle_irq(irqnum);")
KBUILD = "obj-m := gpio-sim.o\ngpio-sim-y := gpio-sim-core.o irq_sim.o\n"


def tarball() -> Path:
    found = sorted(Path("/usr/src").glob("linux-source-6.1.tar.*"))
    if not found:
        raise RuntimeError("no /usr/src/linux-source-6.1.tar.*: run scripts/test-box-deps.sh")
    return found[-1]


def headers() -> Path:
    path = Path(f"/usr/src/linux-headers-{image.KVER}")
    if not (path / "Makefile").exists():
        raise RuntimeError(f"no {path}: run scripts/test-box-deps.sh")
    return path


def module() -> Path:
    """gpio-sim.ko for the test kernel, built once per kernel source and headers."""
    src, hdr = tarball(), headers()
    key = image.digest(src.name, src.stat().st_size, hdr.resolve(), KBUILD, *PATCH,
                       (hdr / ".config").read_bytes() if (hdr / ".config").exists() else "")
    out = image.cache() / f"gpio-sim-{key}.ko"
    if out.exists():
        return out
    work = image.cache() / f"gpio-sim.tmp.{os.getpid()}"
    image.chroot.remove_tree(work)
    work.mkdir()
    try:
        image.log(f"building gpio-sim.ko from {src.name}")
        top = "linux-source-6.1"
        subprocess.run(["tar", "-xf", str(src), "-C", str(work),
                        *[f"{top}/{p}" for p in SOURCES]], check=True)
        build = work / "build"
        build.mkdir()
        for path, name in SOURCES.items():
            text = (work / top / path).read_text()
            if name == "irq_sim.c":
                assert PATCH[0] in text, "irq_sim.c changed: look at the patch again"
                text = text.replace(*PATCH)
            (build / name).write_text(text)
        (build / "Kbuild").write_text(KBUILD)
        r = subprocess.run(["make", "-C", str(hdr), f"M={build}", "modules"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("gpio-sim did not build:\n" + (r.stdout + r.stderr)[-4000:])
        tmp = out.with_suffix(f".tmp{os.getpid()}")
        (build / "gpio-sim.ko").rename(tmp)
        tmp.rename(out)
    finally:
        image.chroot.remove_tree(work)
    return out
