"""The class report for 300 graded students: the command end to end, and the build alone."""

import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Row, run_timed

AID = "02_forward_pass"
N_STUDENTS = 300


def rows():
    from autograder.report import class_report as report
    from tests.report_fixtures import synthetic_class, write_class

    with tempfile.TemporaryDirectory(prefix="ffn-bench-report-") as tmp:
        tmp = Path(tmp)
        records, _ = synthetic_class(N_STUDENTS, seed=300)
        results = write_class(tmp / "results", records)
        out = tmp / "report.html"
        done, command_s, command_cpu = run_timed([sys.executable, "-m", "autograder.report", AID, "--results",
                                                  str(results), "--out", str(out), "--csv", str(tmp / "report.csv")])
        if done.returncode != 0:
            return [Row(f"class report, {N_STUDENTS} students", float("nan"), "s", "< 10",
                        f"failed: {done.stderr.strip()[-200:]}")]
        size_kb = out.stat().st_size / 1024
        report.build([AID], results)  # warm: imports and font cache
        t0 = time.perf_counter()
        built = report.build([AID], results)
        build_s = time.perf_counter() - t0
    return [
        Row(f"class report, {N_STUDENTS} graded students: command end to end", command_s, "s", "< 10",
            f"wall; CPU {command_cpu:.1f} s; interpreter start and imports included; HTML {size_kb:.0f} KiB"),
        Row(f"class report, {N_STUDENTS} graded students: build in a warm process", build_s, "s", "",
            f"{len(built.reports[0].exercises)} exercises, 3 figures"),
    ]
