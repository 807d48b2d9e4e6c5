"""harness/bench/meter.py: the bench's one process sampler, on a real process tree and on a drawn one."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from harness.bench.meter import TreeMeter


def test_a_tree_is_measured_whole_and_its_marked_workers_apart() -> None:
    # The child's command line names the marker; the parent's only spells it in two halves.
    child = "[sys.executable, '-c', 'import time; time.sleep(30)', 'pyspark' + '.daemon']"
    parent = f"import subprocess, sys, time; subprocess.Popen({child}); time.sleep(30)"
    process = subprocess.Popen([sys.executable, "-c", parent])
    try:
        with TreeMeter(process.pid, every=0.05, workers=("pyspark.daemon",)) as meter:
            deadline = time.monotonic() + 10
            while not meter.worker_pids and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.2)
        assert len(meter.worker_pids) == 1 and process.pid not in meter.worker_pids
        assert meter.peak_processes == 2 and meter.peak_rss >= meter.worker_max_total > 0
        assert meter.worker_max_single == meter.worker_max_total  # one worker
        assert meter.peak_by_kind["root"] > 0 and meter.peak_by_kind["spark_jvm"] == 0
        assert meter.samples >= 2 and meter.cpu_seconds() >= 0.0
        assert meter.figures()["processes_at_peak"] == 2
    finally:
        for descendant in psutil.Process(process.pid).children(recursive=True):
            descendant.kill()
        process.kill()
        process.wait()


def test_kinds_are_the_root_the_jvms_and_the_processes_below_a_jvm() -> None:
    meter = TreeMeter()  # this process as the root; only the drawn tree below is looked at
    root = meter.root.pid
    drawn = {  # pid -> (process, parent pid, is a JVM, RSS)
        root: (None, 1, False, 100),
        2: (None, root, True, 1000),  # spark-submit's JVM
        3: (None, 2, False, 50),  # the Python driver it started
        4: (None, 3, False, 20),  # a worker forked by that Python: still below the JVM
        5: (None, root, False, 7),  # something else the root started: in the tree, of no kind
    }
    meter._tree_peaks(drawn)
    assert meter.peak_by_kind == {"root": 100, "spark_jvm": 1000, "spark_python": 70, "tree": 1170}
    assert meter.peak_rss == 1177 and meter.peak_processes == 5
