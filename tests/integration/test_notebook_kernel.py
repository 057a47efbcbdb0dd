"""Notebook-first results (issue 24): in a fresh Jupyter kernel (ipykernel, started by jupyter_client as Jupyter
starts it: its own process group, no ``%matplotlib inline``, no ipywidgets), a result and its figure show as
images, a run's progress bar stays quiet, and nothing is written to standard error, not even at shutdown."""

from __future__ import annotations

import base64
import importlib.util
import signal
from pathlib import Path
from typing import Any

import matplotlib.font_manager  # noqa: F401 - a first use builds the font cache (a line on stderr): here, not in the kernel
import nbformat
import psutil
import pytest
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

from tests.calibration import scaled

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _jupyters_own_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever backend the test runner set, the kernel starts with Jupyter's default (the inline backend)."""
    monkeypatch.delenv("MPLBACKEND", raising=False)


def _execute(tmp_path: Path, *cells: str) -> list[list[dict[str, object]]]:
    """The outputs of each code cell, run in order in a fresh ``python3`` kernel (this interpreter's)."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = NotebookClient(notebook, timeout=int(scaled(120)), kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    return [list(cell.outputs) for cell in notebook.cells]


def _images(outputs: list[dict[str, object]]) -> list[bytes]:
    return [base64.b64decode(o["data"]["image/png"]) for o in outputs  # type: ignore[index]
            if o["output_type"] in ("display_data", "execute_result") and "image/png" in o["data"]]  # type: ignore[operator]


def _stderr(cells: list[list[dict[str, object]]]) -> str:
    return "".join(str(o.get("text", "")) for outputs in cells for o in outputs
                   if o["output_type"] == "stream" and o.get("name") == "stderr")


def test_a_result_and_its_figure_show_as_images_in_a_plain_kernel(tmp_path: Path) -> None:
    widgets = importlib.util.find_spec("ipywidgets") is not None  # the test extra has none: rich would warn
    cells = _execute(
        tmp_path,
        "import mpdp\nmpdp.compose(epsilon=0.5, k=2).plot()",
        "r = mpdp.compose(epsilon=0.5, k=2)\nr",
        "from mpdp.parties.session.datasets import load_dataset\nfrom mpdp.parties.session.progress import Progress\n"
        "with Progress(load_dataset('house-votes-84'), enabled=True) as bar:\n    bar.update(1, 435)\n'done'",
    )
    figure, result, progress = cells
    (image,) = _images(figure)
    assert image.startswith(PNG_MAGIC) and len(image) > 5_000  # a drawn figure, not an empty canvas
    assert not any("<Figure size" in str(o.get("data", {}).get("text/plain", "")) and "image/png" not in o["data"]
                   for o in figure if o["output_type"] == "execute_result")
    (shown,) = [o for o in result if o["output_type"] == "execute_result"]
    page = shown["data"]["text/html"]  # type: ignore[index]
    assert "<table>" in page and "k=2" in page
    embedded = base64.b64decode(page.split('src="data:image/png;base64,', 1)[1].split('"', 1)[0])
    assert embedded.startswith(PNG_MAGIC)
    assert [o["data"]["text/plain"] for o in progress if o["output_type"] == "execute_result"] == ["'done'"]  # type: ignore[index]
    assert _stderr(cells) == "", widgets  # no UserWarning about ipywidgets, no matplotlib or rich noise


def test_the_lp_deadline_worker_ends_quietly_at_kernel_shutdown(tmp_path: Path) -> None:
    """Jupyter's shutdown interrupts the kernel's whole process group (SIGINT) before asking it to quit: the
    worker of :func:`mpdp.protocols.numerics.deadline.call_before`, started by the kernel, must end without a
    ``KeyboardInterrupt`` traceback and must not outlive the kernel."""
    log = tmp_path / "kernel-stderr.txt"
    manager = KernelManager(kernel_name="python3")
    with log.open("wb") as sink:
        manager.start_kernel(stderr=sink, stdout=sink, cwd=str(tmp_path))
    client = manager.client()
    outputs: list[dict[str, Any]] = []
    try:
        client.start_channels()
        client.wait_for_ready(timeout=scaled(60))
        reply = client.execute_interactive(
            "import math, os\nfrom mpdp.protocols.numerics import deadline\n"
            "print(deadline.call_before(math.sqrt, (16.0,), 60.0), os.getpid())",
            timeout=scaled(120), output_hook=outputs.append)
        assert reply["content"]["status"] == "ok"
        kernel_pid = manager.provisioner.process.pid  # type: ignore[union-attr]
        workers = [p for p in psutil.Process(kernel_pid).children() if "deadline" in " ".join(p.cmdline())]
        assert len(workers) == 1
        printed = "".join(m["content"].get("text", "") for m in outputs if m["msg_type"] == "stream")
        assert printed.startswith("4.0 ")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)
    gone, alive = psutil.wait_procs(workers, timeout=scaled(10))
    for process in alive:  # leave nothing behind, then fail
        process.send_signal(signal.SIGKILL)
    assert alive == []
    text = log.read_text(errors="replace")
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text[-2000:]

